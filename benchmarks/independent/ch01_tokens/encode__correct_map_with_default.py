# exercise: encode
# kind: correct
# class: value
# rule: no comprehension: maps dict.get over the characters with itertools.repeat supplying
#       self.unk_id as the default, and checks the type with an explicit isinstance first.
# shows: -
def encode(self, text):
    import itertools
    if not isinstance(text, str):
        raise TypeError(f"encode expects a str, got {type(text).__name__}")
    return list(map(self.stoi.get, text, itertools.repeat(self.unk_id)))

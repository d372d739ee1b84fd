# exercise: encode
# kind: faulty
# class: type
# rule: "text 不是 str 时抛出 TypeError" (notebook exercise text; summary: "不是 str 就抛 TypeError").
#       This body blacklists list and tuple only, so other non-str sequences are looked up
#       character by character without an error.
# shows: Tokenizer(["<unk>", "a"]).encode(b"ab") returns [0, 0] (bytes iterate as ints), and
#        encode(iter("ab")) returns [1, 0], instead of raising TypeError.
def encode(self, text):
    if isinstance(text, (list, tuple)):
        raise TypeError("encode expects a str, not a sequence of characters")
    return [self.stoi.get(ch, self.unk_id) for ch in text]

# exercise: build_vocab
# kind: faulty
# class: value
# rule: ties broken "by code point" (module docstring; notebook: "按 Unicode 码位从小到大").
#       This body breaks ties by the UTF-16 encoding of the character, which puts a character
#       beyond U+FFFF (surrogate pair D840..) before e.g. U+FF0C.
# shows: build_vocab("𠀀，山𠀀，山𠀀，山月", 4) gives ['<unk>', '山', '𠀀', '，'] instead of
#        ['<unk>', '山', '，', '𠀀'] (U+FF0C < U+20000).
def build_vocab(text, max_size):
    counts = Counter(text)
    ranked = sorted(counts, key=lambda ch: (-counts[ch], ch.encode("utf-16-be")))
    return [UNK] + ranked[:max(max_size - 1, 0)]

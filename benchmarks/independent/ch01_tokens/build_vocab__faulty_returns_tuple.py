# exercise: build_vocab
# kind: faulty
# class: type
# rule: the result is "The id-to-token list" (docstring of build_vocab; notebook: "返回 id 到
#       词元的列表（itos）", answer cell: "字符串列表"). This body returns a tuple.
# shows: build_vocab("aab", 3) returns ('<unk>', 'a', 'b'), a tuple, not a list; e.g.
#        build_vocab(t, 3) + ["x"] raises TypeError.
def build_vocab(text, max_size):
    counts = Counter(text)
    ranked = sorted(counts, key=lambda ch: (-counts[ch], ord(ch)))
    return (UNK, *ranked[:max(max_size - 1, 0)])

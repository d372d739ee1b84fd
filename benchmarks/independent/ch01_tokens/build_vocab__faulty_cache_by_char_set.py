# exercise: build_vocab
# kind: faulty
# class: hidden-state
# rule: "函数不在调用之间保留任何状态，同样的输入再调用一次，结果一样" (notebook glossary) and the
#       ranking is by each text's own counts. The memo is keyed by (set of characters, max_size),
#       so a second text with the same characters but other counts gets the first text's vocabulary.
# shows: build_vocab("aab", 3) -> ['<unk>', 'a', 'b']; then build_vocab("abb", 3) returns
#        ['<unk>', 'a', 'b'] again instead of ['<unk>', 'b', 'a'].
def build_vocab(text, max_size):
    memo = globals().setdefault("_build_vocab_memo", {})
    key = (frozenset(text), max_size)
    if key not in memo:
        counts = Counter(text)
        ranked = sorted(counts, key=lambda ch: (-counts[ch], ord(ch)))
        memo[key] = [UNK] + ranked[:max(max_size - 1, 0)]
    return list(memo[key])

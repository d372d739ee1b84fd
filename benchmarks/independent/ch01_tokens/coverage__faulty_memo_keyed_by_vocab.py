# exercise: coverage
# kind: faulty
# class: hidden-state
# rule: no state between calls; coverage depends on both itos and text (docstring: "The
#       fraction of the characters of `text` ..."). The memo is keyed by the vocabulary only, so
#       the same vocabulary on a second text returns the first text's coverage.
# shows: coverage(["<unk>", "a"], "ab") -> 0.5; then coverage(["<unk>", "a"], "aaaa") returns
#        0.5 again instead of 1.0.
def coverage(itos, text):
    memo = globals().setdefault("_coverage_memo", {})
    key = tuple(itos)
    if key not in memo:
        held = set(itos) - {UNK}
        memo[key] = sum(ch in held for ch in text) / len(text)
    return memo[key]

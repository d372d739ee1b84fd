# exercise: unigram_cross_entropy
# kind: faulty
# class: hidden-state
# rule: "函数不在调用之间保留任何状态，同样的输入再调用一次，结果一样" (notebook glossary); the
#       counts must be those of this call's train_ids. The training counts are cached under
#       (len(train_ids), vocab_size), so another training text of the same length reuses them.
# shows: unigram_cross_entropy([1, 1, 2], [1], 4) = ln(7/3) = 0.847; then
#        unigram_cross_entropy([2, 2, 1], [1], 4) returns 0.847 again instead of ln 7/2 = 1.253.
def unigram_cross_entropy(train_ids, eval_ids, vocab_size, alpha=1.0):
    cache = globals().setdefault("_unigram_counts_cache", {})
    key = (len(train_ids), vocab_size)
    if key not in cache:
        cache[key] = Counter(train_ids)
    counts = cache[key]
    denominator = len(train_ids) + alpha * vocab_size
    total = 0.0
    for i in eval_ids:
        q = (counts[i] + alpha) / denominator
        if q == 0:
            return math.inf
        total -= math.log(q)
    return total / len(eval_ids)

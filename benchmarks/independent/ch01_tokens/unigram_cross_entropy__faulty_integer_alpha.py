# exercise: unigram_cross_entropy
# kind: faulty
# class: value
# rule: p(i) = (count(i) + alpha) / (len(train_ids) + alpha * vocab_size) for any alpha
#       (docstring; notebook: "加 α 平滑"), alpha a real number (default 1.0, checks use 0.5,
#       0.25). This body keeps the counting in integers with int(alpha), so 0 < alpha < 1
#       becomes no smoothing at all.
# shows: unigram_cross_entropy([1, 1, 2], [1, 2], 4, alpha=0.5) should be
#        -(ln(2.5/5) + ln(1.5/5))/2 = 0.9486; this body gives -(ln 2/3 + ln 1/3)/2 = 0.7520,
#        and for eval [3] it returns math.inf instead of ln 10 = 2.303.
def unigram_cross_entropy(train_ids, eval_ids, vocab_size, alpha=1.0):
    smoothing = int(alpha)
    counts = Counter(train_ids)
    denominator = len(train_ids) + smoothing * vocab_size
    total = 0.0
    for i in eval_ids:
        numerator = counts[i] + smoothing
        if numerator == 0:
            return math.inf
        total -= math.log(numerator / denominator)
    return total / len(eval_ids)

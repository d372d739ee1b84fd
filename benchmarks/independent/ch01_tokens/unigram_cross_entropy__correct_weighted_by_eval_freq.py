# exercise: unigram_cross_entropy
# kind: correct
# class: value
# rule: instead of averaging -ln q over the evaluated tokens one by one, groups them: the sum
#       over distinct evaluated ids of p_eval(i) * (-ln q(i)), with p_eval the evaluated text's
#       own frequencies (the cross-entropy formula H(p, q)); an id with q(i) = 0 gives math.inf.
# shows: -
def unigram_cross_entropy(train_ids, eval_ids, vocab_size, alpha=1.0):
    train_counts = Counter(train_ids)
    eval_counts = Counter(eval_ids)
    denominator = len(train_ids) + alpha * vocab_size
    n_eval = len(eval_ids)
    total = 0.0
    for i, k in eval_counts.items():
        q = (train_counts[i] + alpha) / denominator
        if q == 0:
            return math.inf
        total += (k / n_eval) * -math.log(q)
    return float(total)

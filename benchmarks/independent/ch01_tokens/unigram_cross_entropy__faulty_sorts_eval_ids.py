# exercise: unigram_cross_entropy
# kind: faulty
# class: in-place
# rule: exercise functions only read their arguments ("每个参数...都必须和调用前一模一样",
#       notebook glossary). This body sorts the caller's eval_ids list in place to group equal
#       ids; the value is right but the caller's list is reordered.
# shows: ev = [3, 1, 2]; unigram_cross_entropy([1, 2, 3], ev, 4) returns the right value but
#        afterwards ev == [1, 2, 3].
def unigram_cross_entropy(train_ids, eval_ids, vocab_size, alpha=1.0):
    counts = Counter(train_ids)
    denominator = len(train_ids) + alpha * vocab_size
    eval_ids.sort()
    total, previous, cost = 0.0, None, 0.0
    for i in eval_ids:
        if i != previous:
            q = (counts[i] + alpha) / denominator
            if q == 0:
                return math.inf
            cost, previous = -math.log(q), i
        total += cost
    return total / len(eval_ids)

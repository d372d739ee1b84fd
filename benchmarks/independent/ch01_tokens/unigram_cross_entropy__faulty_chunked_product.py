# exercise: unigram_cross_entropy
# kind: faulty
# class: range
# rule: the average of -ln q over tokens must stay finite and exact for long texts and large
#       vocabularies (visible check: "几千个概率先相乘，乘积会下溢成 0"; the notebook applies it to the
#       corpus with V = 1200). This body multiplies the probabilities in blocks of 256 tokens and
#       takes one log per block; with rare ids (q ~ 1e-4) a block underflows to 0.0.
# shows: train = list(range(1200)) * 10, eval = list(range(300)), V = 1200, alpha = 1:
#        the answer is ln 1200 = 7.09; this body returns math.inf (block product 0.0).
def unigram_cross_entropy(train_ids, eval_ids, vocab_size, alpha=1.0):
    counts = Counter(train_ids)
    denominator = len(train_ids) + alpha * vocab_size
    total = 0.0
    for start in range(0, len(eval_ids), 256):
        product = 1.0
        for i in eval_ids[start:start + 256]:
            product *= (counts[i] + alpha) / denominator
        if product == 0.0:
            return math.inf
        total -= math.log(product)
    return total / len(eval_ids)

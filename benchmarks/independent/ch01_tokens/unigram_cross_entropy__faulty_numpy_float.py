# exercise: unigram_cross_entropy
# kind: faulty
# class: type
# rule: "返回的数是 Python 自己的 int、float（不是 numpy 的数...）" (notebook glossary); the exercise
#       text says the result is "一个浮点数". This body computes with numpy and returns the
#       numpy.float64 from .mean() (values are right, -ln 0 gives inf).
# shows: type(unigram_cross_entropy([1, 1, 2], [1, 3], 4)) is numpy.float64, not float.
def unigram_cross_entropy(train_ids, eval_ids, vocab_size, alpha=1.0):
    import numpy as np
    counts = np.bincount(np.asarray(train_ids, dtype=np.int64), minlength=vocab_size).astype(np.float64)
    q = (counts + alpha) / (len(train_ids) + alpha * vocab_size)
    with np.errstate(divide="ignore"):
        losses = -np.log(q[np.asarray(eval_ids, dtype=np.int64)])
    return losses.mean()

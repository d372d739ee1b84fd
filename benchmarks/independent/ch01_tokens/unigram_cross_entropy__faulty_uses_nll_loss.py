# exercise: unigram_cross_entropy
# kind: faulty
# class: rule
# rule: "用 math.log 自己写出求和。不要调用 torch.nn.functional.cross_entropy、log_softmax、
#       nll_loss ... 这一题记 0 分" (notebook exercise text). Values are right (float64, inf for
#       an unseen id with alpha = 0), but the average is taken with F.nll_loss.
# shows: unigram_cross_entropy([1, 1, 2], [1, 3], 4) returns 1.3966 through the forbidden
#        torch.nn.functional.nll_loss call.
def unigram_cross_entropy(train_ids, eval_ids, vocab_size, alpha=1.0):
    import torch
    import torch.nn.functional as F
    counts = torch.bincount(torch.tensor(train_ids, dtype=torch.long), minlength=vocab_size).double()
    q = (counts + alpha) / (len(train_ids) + alpha * vocab_size)
    targets = torch.tensor(eval_ids, dtype=torch.long)
    log_q = torch.log(q).expand(len(eval_ids), vocab_size)
    return float(F.nll_loss(log_q, targets))

# exercise: attention_scores
# kind: faulty
# class: gradient
# rule: the scores are part of the trained attention (notebook sections 6-8: the model is trained, Q/K
#       projections are parameters); detaching them cuts every gradient to the q and k projections
# shows: q = torch.randn(2, 3, 4, requires_grad=True); attention_scores(q, torch.randn(2, 5, 4))
#        .requires_grad is False and .sum().backward() raises / q.grad stays None
def attention_scores(q, k):
    scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
    return scores.detach()

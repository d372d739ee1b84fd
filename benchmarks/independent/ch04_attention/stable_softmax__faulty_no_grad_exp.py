# exercise: stable_softmax
# kind: faulty
# class: gradient
# rule: the softmax sits inside the trained attention (CausalSelfAttention.forward calls it); wrapping the
#       shift AND the exp in torch.no_grad (meant only to keep the maximum out of the graph) detaches the
#       weights, so no gradient reaches the scores / the q and k projections
# shows: s = torch.randn(3, 5, requires_grad=True); stable_softmax(s).requires_grad is False
def stable_softmax(scores):
    with torch.no_grad():
        top = scores.amax(dim=-1, keepdim=True)
        e = torch.exp(scores - top)
    return e / e.sum(dim=-1, keepdim=True)

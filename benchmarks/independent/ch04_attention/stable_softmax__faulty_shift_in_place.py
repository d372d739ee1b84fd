# exercise: stable_softmax
# kind: faulty
# class: in-place
# rule: softmax is a function of the scores; the caller's scores must not be changed (the notebook and the
#       forward keep using the tensor they pass); this body subtracts the row maximum in place
# shows: s = torch.tensor([1.0, 2.0, 3.0]); stable_softmax(s) is right, but s is now [-2., -1., 0.]
def stable_softmax(scores):
    scores.sub_(scores.amax(dim=-1, keepdim=True))
    e = scores.exp()
    return e / e.sum(dim=-1, keepdim=True)

# exercise: stable_softmax
# kind: faulty
# class: range
# rule: the docstring and notebook section 4 say to subtract each row's MAXIMUM "so that exp never
#       overflows"; subtracting the row's first score keeps shift invariance but not the range guarantee
# shows: stable_softmax(torch.tensor([0.0, 200.0])) gives [0.0, nan] (exp(200) = inf in float32) instead of
#        [0, 1]; a row whose first score is -inf (e.g. a sliding-window mask) gives NaN instead of weights
def stable_softmax(scores):
    shifted = scores - scores[..., :1]
    e = torch.exp(shifted)
    return e / e.sum(dim=-1, keepdim=True)

# exercise: attention_scores
# kind: faulty
# class: in-place
# rule: a function of q and k returns new scores; the caller's q must not change (notebook reuses the same
#       q/k after computing scores); this body scales the caller's query tensor in place
# shows: q = torch.ones(1, 4); k = torch.ones(1, 4); attention_scores(q, k) gives 2.0 but q is now all 0.5,
#        and a second identical call gives 1.0
def attention_scores(q, k):
    q /= math.sqrt(q.shape[-1])
    return q @ k.transpose(-2, -1)

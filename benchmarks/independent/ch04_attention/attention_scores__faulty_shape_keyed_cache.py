# exercise: attention_scores
# kind: faulty
# class: hidden-state
# rule: the scores are a function of the values of q and k (docstring: "-> [..., T_q, T_k] scores
#       q.k / sqrt(d_h)"); this body memoises results in a module-level dict keyed only by the shapes
# shows: attention_scores(torch.randn(3, 4), torch.randn(3, 4)) then attention_scores(torch.ones(3, 4),
#        torch.ones(3, 4)): the second call returns the first call's random scores instead of all 2.0
def attention_scores(q, k):
    memo = globals().setdefault("_attention_scores_memo", {})
    key = (tuple(q.shape), tuple(k.shape))
    if key not in memo:
        memo[key] = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    return memo[key]

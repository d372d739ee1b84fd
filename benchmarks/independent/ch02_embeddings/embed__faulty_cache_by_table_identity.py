# exercise: embed
# kind: faulty
# class: hidden-state
# rule: the result must be the table's current rows ("位置 (b,t) 上是表的第 ids[b, t] 行"); this body
#       memoises lookups in a module-level dict keyed by (id(weight), ids values), so after the table is
#       updated in place (an optimizer step) the same ids return the old rows.
# shows: w = torch.zeros(4, 2); embed(torch.tensor([[1]]), w); w.add_(1.0); embed(torch.tensor([[1]]), w)
#        returns [[[0., 0.]]] instead of [[[1., 1.]]].
def embed(ids, weight):
    vocab = weight.shape[0]
    if bool(((ids.long() < 0) | (ids.long() >= vocab)).any()):
        raise ValueError("id outside [0, V)")
    cache = globals().setdefault("_embed_lookup_cache", {})
    key = (id(weight), tuple(ids.shape), tuple(ids.reshape(-1).tolist()))
    if key not in cache:
        cache[key] = weight[ids.long()]
    return cache[key]

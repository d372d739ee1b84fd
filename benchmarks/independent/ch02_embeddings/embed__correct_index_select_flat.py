# exercise: embed
# kind: correct
# class: value
# rule: instead of weight[ids], flattens the ids, reads the rows with torch.index_select along axis 0
#       and reshapes to ids.shape + (d,); range checked with an elementwise mask (negatives included,
#       empty ids allowed); stays in the autograd graph.
# shows: n/a (correct body)
def embed(ids, weight):
    vocab = weight.shape[0]
    flat = ids.reshape(-1).to(torch.int64)
    bad = (flat < 0) | (flat >= vocab)
    if bool(bad.any()):
        raise ValueError(f"ids must lie in [0, {vocab})")
    picked = torch.index_select(weight, 0, flat)
    return picked.reshape(*ids.shape, weight.shape[1])

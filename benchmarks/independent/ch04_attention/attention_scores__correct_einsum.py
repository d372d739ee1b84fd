# exercise: attention_scores
# kind: correct
# class: value
# rule: correct; uses torch.einsum with a broadcasting ellipsis instead of q @ k.transpose(-2, -1),
#       and multiplies by the reciprocal square root of d_h = q.shape[-1] rather than dividing
def attention_scores(q, k):
    inv_root = 1.0 / math.sqrt(q.shape[-1])
    return torch.einsum("...id,...jd->...ij", q, k) * inv_root

# exercise: layer_norm_backward
# kind: faulty
# class: value
# rule: notebook: grad_weight/grad_bias have shape [d], summed over all leading axes, and
#       "x 也可能只是一个长度为 d 的向量" (x may be a single vector); this body sums over
#       dim=tuple(range(x.dim() - 1)), which for a 1-D x is dim=() and torch then sums EVERYTHING
# shows: x = (2., -1., 0., 3.), grad_out = (1., 0., 0., 0.), weight = ones(4): grad_weight and
#        grad_bias come back as 0-dim scalars instead of [4] vectors (3-D inputs are fine)
def layer_norm_backward(grad_out, x, weight, eps=EPS):
    mu = x.mean(dim=-1, keepdim=True)
    c = x - mu
    var = (c * c).mean(dim=-1, keepdim=True)
    sigma = torch.sqrt(var + eps)
    xhat = c / sigma
    g = grad_out * weight
    grad_x = (g - g.mean(dim=-1, keepdim=True)
              - xhat * (g * xhat).mean(dim=-1, keepdim=True)) / sigma
    lead = tuple(range(x.dim() - 1))
    grad_weight = (grad_out * xhat).sum(dim=lead)
    grad_bias = grad_out.sum(dim=lead)
    return grad_x, grad_weight, grad_bias

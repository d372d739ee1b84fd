# exercise: layer_norm_backward
# kind: faulty
# class: in-place
# rule: a backward receives "the forward's inputs" and returns gradients (module docstring); it
#       must not change them. This body centres the caller's x in place (x.sub_(mean)); the
#       gradients are right because LayerNorm is shift invariant, but the caller's x is altered
# shows: x = 2*randn(2, 3, 4) + 1: after the call x has every row's mean subtracted (x.mean(-1)
#        is ~0), so a caller reusing x (e.g. for the next layer or the optimizer) sees wrong data
def layer_norm_backward(grad_out, x, weight, eps=EPS):
    c = x.sub_(x.mean(dim=-1, keepdim=True))
    var = (c * c).mean(dim=-1, keepdim=True)
    sigma = torch.sqrt(var + eps)
    xhat = c / sigma
    g = grad_out * weight
    grad_x = (g - g.mean(dim=-1, keepdim=True)
              - xhat * (g * xhat).mean(dim=-1, keepdim=True)) / sigma
    d = x.shape[-1]
    grad_weight = (grad_out * xhat).reshape(-1, d).sum(dim=0)
    grad_bias = grad_out.reshape(-1, d).sum(dim=0)
    return grad_x, grad_weight, grad_bias

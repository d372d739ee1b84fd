# exercise: layer_norm_backward
# kind: faulty
# class: range
# rule: population variance must be computed stably for the inputs the chapter uses (the
#       notebook's near-constant x = (1, 1.002, 1.004), variance below eps); this body takes
#       var = E[x^2] - E[x]^2, which cancels catastrophically when |mean| >> std
# shows: float32 x = (1, 1.002, 1.004), grad_out = (0, 0, 1), weight = 1: grad_x is visibly off
#        from autograd's (-64.091, -93.822, 157.913 vs -64.083, -93.659, 157.742); float64
#        x = 1e4 + 1e-3*randn(4) is off by ~0.1% (larger offsets give garbage or nan)
def layer_norm_backward(grad_out, x, weight, eps=EPS):
    mu = x.mean(dim=-1, keepdim=True)
    var = (x * x).mean(dim=-1, keepdim=True) - mu * mu
    sigma = torch.sqrt(var + eps)
    xhat = (x - mu) / sigma
    g = grad_out * weight
    grad_x = (g - g.mean(dim=-1, keepdim=True)
              - xhat * (g * xhat).mean(dim=-1, keepdim=True)) / sigma
    d = x.shape[-1]
    grad_weight = (grad_out * xhat).reshape(-1, d).sum(dim=0)
    grad_bias = grad_out.reshape(-1, d).sum(dim=0)
    return grad_x, grad_weight, grad_bias

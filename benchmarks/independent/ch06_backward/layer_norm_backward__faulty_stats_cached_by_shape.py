# exercise: layer_norm_backward
# kind: faulty
# class: hidden-state
# rule: grad_x and grad_weight depend on x (docstring formula with xhat and sigma of THIS x);
#       this body caches (xhat, sigma) in a module-level dict keyed by (shape, dtype, eps), so a
#       second call with another x of the same shape reuses the first call's statistics
# shows: call with x1 = randn(2, 3, 4), then with x2 = 3*randn(2, 3, 4) + 2 (same grad_out, weight):
#        the second result equals the first one instead of autograd's gradient at x2
def layer_norm_backward(grad_out, x, weight, eps=EPS):
    cache = globals().setdefault('_layer_norm_stats_cache', {})
    key = (tuple(x.shape), x.dtype, eps)
    if key not in cache:
        mu = x.mean(dim=-1, keepdim=True)
        c = x - mu
        var = (c * c).mean(dim=-1, keepdim=True)
        sigma = torch.sqrt(var + eps)
        cache[key] = (c / sigma, sigma)
    xhat, sigma = cache[key]
    g = grad_out * weight
    grad_x = (g - g.mean(dim=-1, keepdim=True)
              - xhat * (g * xhat).mean(dim=-1, keepdim=True)) / sigma
    d = x.shape[-1]
    grad_weight = (grad_out * xhat).reshape(-1, d).sum(dim=0)
    grad_bias = grad_out.reshape(-1, d).sum(dim=0)
    return grad_x, grad_weight, grad_bias

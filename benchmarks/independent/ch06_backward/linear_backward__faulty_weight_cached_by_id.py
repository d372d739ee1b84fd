# exercise: linear_backward
# kind: faulty
# class: hidden-state
# rule: grad_x = grad_out W with the weight passed in this call (docstring); this body keeps a
#       copy of the weight in a module-level dict keyed by (id(weight), shape), so after the
#       weight is updated in place (as an optimizer step does) later calls use the old weight
# shows: w = randn(5, 4); call once; w.add_(1.0); call again with the same grad_out, x, w:
#        grad_x is grad_out @ (old w), off by grad_out.sum(-1, keepdim=True) in every entry
def linear_backward(grad_out, x, weight):
    cache = globals().setdefault('_linear_weight_cache', {})
    key = (id(weight), tuple(weight.shape))
    if key not in cache:
        cache[key] = weight.detach().clone()
    kept = cache[key]
    flat_g = grad_out.reshape(-1, weight.shape[0])
    flat_x = x.reshape(-1, weight.shape[1])
    grad_x = grad_out @ kept
    grad_weight = flat_g.transpose(0, 1) @ flat_x
    grad_bias = flat_g.sum(dim=0)
    return grad_x, grad_weight, grad_bias

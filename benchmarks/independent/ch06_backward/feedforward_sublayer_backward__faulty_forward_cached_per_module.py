# exercise: feedforward_sublayer_backward
# kind: faulty
# class: hidden-state
# rule: docstring: "Recompute the forward pieces the backward needs" (z, h, a of THIS u); this
#       body keeps (z, h, a) in a module-level dict keyed by (id(ln), id(ffn)), so a second call
#       with a different u (same modules, as in every training step) reuses the first u's pieces
# shows: call with u1 = randn(2, 3, 4), then u2 = randn(2, 3, 4) + 1: the second call's fc2/fc1
#        gradients are those of u1
def feedforward_sublayer_backward(grad_out, u, ln, ffn):
    cache = globals().setdefault('_sublayer_forward_cache', {})
    key = (id(ln), id(ffn))
    w1, w2 = ffn.fc1.weight.detach(), ffn.fc2.weight.detach()
    if key not in cache:
        mu = u.mean(dim=-1, keepdim=True)
        c = u - mu
        var = (c * c).mean(dim=-1, keepdim=True)
        z = c / torch.sqrt(var + ln.eps) * ln.weight.detach() + ln.bias.detach()
        h = z @ w1.transpose(0, 1) + ffn.fc1.bias.detach()
        a = 0.5 * h * (1.0 + torch.erf(h / math.sqrt(2.0)))
        cache[key] = (z, h, a)
    z, h, a = cache[key]
    grads = {}

    def branch(g):
        grad_a, grads["fc2.weight"], grads["fc2.bias"] = linear_backward(g, a, w2)
        grad_h = gelu_backward(grad_a, h)
        grad_z, grads["fc1.weight"], grads["fc1.bias"] = linear_backward(grad_h, z, w1)
        grad_x, grads["ln.weight"], grads["ln.bias"] = layer_norm_backward(grad_z, u, ln.weight.detach(), ln.eps)
        return grad_x

    grad_u = residual_backward(grad_out, branch)
    return grad_u, grads

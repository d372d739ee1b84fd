# exercise: feedforward_sublayer_backward
# kind: faulty
# class: in-place
# rule: the sublayer recomputes the forward from u (docstring) and must leave the caller's u
#       (the residual stream) alone; this body centres u in place (u.sub_(mean)). Every value is
#       right (LayerNorm ignores the shift) but the caller's u has lost its mean
# shows: u = randn(2, 3, 4) + 3: after the call u.mean(-1) is ~0 everywhere instead of ~3
def feedforward_sublayer_backward(grad_out, u, ln, ffn):
    w1, w2 = ffn.fc1.weight.detach(), ffn.fc2.weight.detach()
    c = u.sub_(u.mean(dim=-1, keepdim=True))
    var = (c * c).mean(dim=-1, keepdim=True)
    z = c / torch.sqrt(var + ln.eps) * ln.weight.detach() + ln.bias.detach()
    h = z @ w1.transpose(0, 1) + ffn.fc1.bias.detach()
    a = 0.5 * h * (1.0 + torch.erf(h / math.sqrt(2.0)))
    grads = {}

    def branch(g):
        grad_a, grads["fc2.weight"], grads["fc2.bias"] = linear_backward(g, a, w2)
        grad_h = gelu_backward(grad_a, h)
        grad_z, grads["fc1.weight"], grads["fc1.bias"] = linear_backward(grad_h, z, w1)
        grad_x, grads["ln.weight"], grads["ln.bias"] = layer_norm_backward(grad_z, u, ln.weight.detach(), ln.eps)
        return grad_x

    grad_u = residual_backward(grad_out, branch)
    return grad_u, grads

# exercise: feedforward_sublayer_backward
# kind: faulty
# class: rule
# rule: docstring: ln is a model.LayerNorm "(weight, bias, eps)"; the check's message: "pass LN's
#       own eps to layer_norm_backward". This body recomputes z with ln.eps but calls
#       layer_norm_backward(grad_z, u, ln.weight) so the default EPS = 1e-5 is used there
# shows: model.LayerNorm(4, eps=0.25), u = randn(2, 3, 4): grad_u, ln.weight grad differ from
#        the autograd gradient (fine only when ln.eps happens to be 1e-5)
def feedforward_sublayer_backward(grad_out, u, ln, ffn):
    w1, w2 = ffn.fc1.weight.detach(), ffn.fc2.weight.detach()
    mu = u.mean(dim=-1, keepdim=True)
    c = u - mu
    var = (c * c).mean(dim=-1, keepdim=True)
    z = c / torch.sqrt(var + ln.eps) * ln.weight.detach() + ln.bias.detach()
    h = z @ w1.transpose(0, 1) + ffn.fc1.bias.detach()
    a = 0.5 * h * (1.0 + torch.erf(h / math.sqrt(2.0)))
    grads = {}

    def branch(g):
        grad_a, grads["fc2.weight"], grads["fc2.bias"] = linear_backward(g, a, w2)
        grad_h = gelu_backward(grad_a, h)
        grad_z, grads["fc1.weight"], grads["fc1.bias"] = linear_backward(grad_h, z, w1)
        grad_x, grads["ln.weight"], grads["ln.bias"] = layer_norm_backward(grad_z, u, ln.weight.detach())
        return grad_x

    grad_u = residual_backward(grad_out, branch)
    return grad_u, grads

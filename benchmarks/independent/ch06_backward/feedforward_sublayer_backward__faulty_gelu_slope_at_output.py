# exercise: feedforward_sublayer_backward
# kind: faulty
# class: value
# rule: docstring/notebook: gelu_backward is taken at h = fc1(z) ("gelu_backward（在 h 处）"); this
#       body passes the activation's OUTPUT a = GELU(h) to gelu_backward
# shows: any u with the real chapter functions, e.g. the notebook's x = (1, 3) sublayer: the fc1
#        and ln gradients and grad_u use g'(a) instead of g'(h) and differ from autograd
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
        grad_h = gelu_backward(grad_a, a)
        grad_z, grads["fc1.weight"], grads["fc1.bias"] = linear_backward(grad_h, z, w1)
        grad_x, grads["ln.weight"], grads["ln.bias"] = layer_norm_backward(grad_z, u, ln.weight.detach(), ln.eps)
        return grad_x

    grad_u = residual_backward(grad_out, branch)
    return grad_u, grads

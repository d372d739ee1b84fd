# exercise: feedforward_sublayer_backward
# kind: faulty
# class: rule
# rule: docstring: "push the gradient back by calling this module's functions by name:
#       linear_backward (fc2), ..."; the notebook: "一定要调用这四个函数，而不是把它们的公式抄进来".
#       This body writes fc2's backward out inline instead of calling linear_backward for it
# shows: with linear_backward replaced by a double (e.g. the visible check's sine_linear_backward)
#        the fc2.* grads and everything downstream differ from the expected wiring; with the real
#        functions the values agree, so only the wiring rule is broken
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
        flat_g = g.reshape(-1, g.shape[-1])
        grad_a = g @ w2
        grads["fc2.weight"] = flat_g.transpose(0, 1) @ a.reshape(-1, a.shape[-1])
        grads["fc2.bias"] = flat_g.sum(dim=0)
        grad_h = gelu_backward(grad_a, h)
        grad_z, grads["fc1.weight"], grads["fc1.bias"] = linear_backward(grad_h, z, w1)
        grad_x, grads["ln.weight"], grads["ln.bias"] = layer_norm_backward(grad_z, u, ln.weight.detach(), ln.eps)
        return grad_x

    grad_u = residual_backward(grad_out, branch)
    return grad_u, grads

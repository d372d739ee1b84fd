# exercise: feedforward_sublayer_backward
# kind: faulty
# class: rule
# rule: residual_backward's docstring: branch_backward "maps an upstream gradient of R's output to
#       the gradient with respect to x"; this body's branch ignores the gradient it is handed and
#       starts from the closure's grad_out (same value only when residual_backward passes
#       grad_out through unchanged)
# shows: with residual_backward replaced by the backward of y = x + R(2x)-style double
#        lambda go, bb: go + bb(2 * go): grad_u and all six grads miss the factor 2
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
        grad_a, grads["fc2.weight"], grads["fc2.bias"] = linear_backward(grad_out, a, w2)
        grad_h = gelu_backward(grad_a, h)
        grad_z, grads["fc1.weight"], grads["fc1.bias"] = linear_backward(grad_h, z, w1)
        grad_x, grads["ln.weight"], grads["ln.bias"] = layer_norm_backward(grad_z, u, ln.weight.detach(), ln.eps)
        return grad_x

    grad_u = residual_backward(grad_out, branch)
    return grad_u, grads

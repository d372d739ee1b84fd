# exercise: feedforward_sublayer_backward
# kind: correct
# class: value
# rule: correct: recomputes z with torch.var_mean and explicit gamma/beta (LN's own eps), h with
#       torch.matmul on detached parameters, a with the erf formula; the branch closure appends
#       the six parameter gradients to a list in backward order and the dict is built by zip
# shows: -
def feedforward_sublayer_backward(grad_out, u, ln, ffn):
    gamma, beta = ln.weight.detach(), ln.bias.detach()
    w1, b1 = ffn.fc1.weight.detach(), ffn.fc1.bias.detach()
    w2, b2 = ffn.fc2.weight.detach(), ffn.fc2.bias.detach()
    var, mu = torch.var_mean(u, dim=-1, keepdim=True, correction=0)
    z = (u - mu) / torch.sqrt(var + ln.eps) * gamma + beta
    h = torch.matmul(z, w1.transpose(0, 1)) + b1
    a = 0.5 * h * (1.0 + torch.erf(h / math.sqrt(2.0)))
    collected = []

    def branch(g):
        grad_a, grad_w2, grad_b2 = linear_backward(g, a, w2)
        grad_h = gelu_backward(grad_a, h)
        grad_z, grad_w1, grad_b1 = linear_backward(grad_h, z, w1)
        grad_x, grad_gamma, grad_beta = layer_norm_backward(grad_z, u, gamma, ln.eps)
        collected.append([grad_gamma, grad_beta, grad_w1, grad_b1, grad_w2, grad_b2])
        return grad_x

    grad_u = residual_backward(grad_out, branch)
    names = ("ln.weight", "ln.bias", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias")
    return grad_u, dict(zip(names, collected[-1]))

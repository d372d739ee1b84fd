# exercise: layer_norm_backward
# kind: correct
# class: value
# rule: correct: no three-term formula; backpropagates node by node through the recomputed graph
#       (xhat = c / s, s = sqrt(v + eps), v = sum(c^2)/d, c = x - mean) on a [N, d] flattening,
#       with einsum for the parameter sums
# shows: -
def layer_norm_backward(grad_out, x, weight, eps=EPS):
    shape = x.shape
    d = shape[-1]
    x2 = x.reshape(-1, d)
    go = grad_out.reshape(-1, d)
    mu = x2.sum(dim=1, keepdim=True) / d
    c = x2 - mu
    v = (c * c).sum(dim=1, keepdim=True) / d
    s = torch.sqrt(v + eps)
    xhat = c / s
    grad_weight = torch.einsum('nd,nd->d', go, xhat)
    grad_bias = torch.einsum('nd->d', go)
    dxhat = go * weight
    dc = dxhat / s
    ds = -(dxhat * c).sum(dim=1, keepdim=True) / (s * s)
    dv = ds / (2 * s)
    dc = dc + dv * 2 * c / d
    dx = dc - dc.sum(dim=1, keepdim=True) / d
    return dx.reshape(shape), grad_weight, grad_bias

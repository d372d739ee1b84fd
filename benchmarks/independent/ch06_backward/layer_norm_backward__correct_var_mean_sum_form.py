# exercise: layer_norm_backward
# kind: correct
# class: value
# rule: correct: statistics from torch.var_mean(correction=0) and rsqrt, and the three-term form
#       rewritten with sums instead of means, (d*g - sum(g) - xhat*sum(g*xhat)) * rstd / d;
#       parameter sums over an explicit list of leading axes (a fresh copy when there are none)
# shows: -
def layer_norm_backward(grad_out, x, weight, eps=EPS):
    d = x.shape[-1]
    var, mu = torch.var_mean(x, dim=-1, keepdim=True, correction=0)
    rstd = torch.rsqrt(var + eps)
    xhat = (x - mu) * rstd
    g = grad_out * weight
    sum_g = g.sum(dim=-1, keepdim=True)
    sum_gx = (g * xhat).sum(dim=-1, keepdim=True)
    grad_x = (d * g - sum_g - xhat * sum_gx) * (rstd / d)
    lead = list(range(x.dim() - 1))
    if lead:
        grad_weight = (grad_out * xhat).sum(dim=lead)
        grad_bias = grad_out.sum(dim=lead)
    else:
        grad_weight = grad_out * xhat
        grad_bias = grad_out.clone()
    return grad_x, grad_weight, grad_bias

# exercise: layer_norm_backward
# kind: faulty
# class: value
# rule: docstring "sigma = sqrt(var + eps)", notebook "eps 放在根号里" (eps inside the root);
#       this body uses sigma = sqrt(var) + eps
# shows: x = 2*randn(2, 3, 4) + 1 in float64: grad_x off by ~1e-5 relative from autograd;
#        the near-constant x = (1, 1.002, 1.004) is off by a large factor
def layer_norm_backward(grad_out, x, weight, eps=EPS):
    mu = x.mean(dim=-1, keepdim=True)
    c = x - mu
    var = (c * c).mean(dim=-1, keepdim=True)
    sigma = torch.sqrt(var) + eps
    xhat = c / sigma
    g = grad_out * weight
    grad_x = (g - g.mean(dim=-1, keepdim=True)
              - xhat * (g * xhat).mean(dim=-1, keepdim=True)) / sigma
    d = x.shape[-1]
    grad_weight = (grad_out * xhat).reshape(-1, d).sum(dim=0)
    grad_bias = grad_out.reshape(-1, d).sum(dim=0)
    return grad_x, grad_weight, grad_bias

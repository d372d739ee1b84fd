# exercise: layer_norm_backward
# kind: faulty
# class: rule
# rule: the notebook: "并用调用者传入的 eps" (use the eps the caller passes); this body uses the
#       module constant EPS inside the root and ignores the eps parameter
# shows: eps=0.25, x = randn(2, 3, 4): grad_x/grad_weight equal those for eps=1e-5, not autograd's
#        for eps=0.25 (the visible check only uses eps=1e-5, so it passes)
def layer_norm_backward(grad_out, x, weight, eps=EPS):
    mu = x.mean(dim=-1, keepdim=True)
    c = x - mu
    var = (c * c).mean(dim=-1, keepdim=True)
    sigma = torch.sqrt(var + EPS)
    xhat = c / sigma
    g = grad_out * weight
    grad_x = (g - g.mean(dim=-1, keepdim=True)
              - xhat * (g * xhat).mean(dim=-1, keepdim=True)) / sigma
    d = x.shape[-1]
    grad_weight = (grad_out * xhat).reshape(-1, d).sum(dim=0)
    grad_bias = grad_out.reshape(-1, d).sum(dim=0)
    return grad_x, grad_weight, grad_bias

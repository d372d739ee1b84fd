# exercise: layer_norm_backward
# kind: faulty
# class: type
# rule: module docstring "Gradients keep the dtype and device of their inputs"; this body
#       upcasts to float64 for accuracy and never casts the results back
# shows: float32 x, weight, grad_out of shape [2, 3, 4]: all three gradients come back float64
#        (values are right; the float64 visible check cannot see it)
def layer_norm_backward(grad_out, x, weight, eps=EPS):
    x, weight, grad_out = x.double(), weight.double(), grad_out.double()
    mu = x.mean(dim=-1, keepdim=True)
    c = x - mu
    var = (c * c).mean(dim=-1, keepdim=True)
    sigma = torch.sqrt(var + eps)
    xhat = c / sigma
    g = grad_out * weight
    grad_x = (g - g.mean(dim=-1, keepdim=True)
              - xhat * (g * xhat).mean(dim=-1, keepdim=True)) / sigma
    d = x.shape[-1]
    grad_weight = (grad_out * xhat).reshape(-1, d).sum(dim=0)
    grad_bias = grad_out.reshape(-1, d).sum(dim=0)
    return grad_x, grad_weight, grad_bias

# exercise: linear_backward
# kind: faulty
# class: device
# rule: module docstring "Gradients keep the dtype and device of their inputs"; this body builds
#       grad_bias from Python floats with torch.tensor(..., dtype=...) and no device, so it is
#       always a CPU tensor
# shows: grad_out, x, weight on cuda (any shape): grad_x and grad_weight are on cuda but
#        grad_bias.device is cpu (values and dtype are right)
def linear_backward(grad_out, x, weight):
    out_features = weight.shape[0]
    flat_g = grad_out.reshape(-1, out_features)
    flat_x = x.reshape(-1, weight.shape[1])
    grad_x = grad_out @ weight
    grad_weight = flat_g.transpose(0, 1) @ flat_x
    grad_bias = torch.tensor([flat_g[:, o].sum().item() for o in range(out_features)],
                             dtype=grad_out.dtype)
    return grad_x, grad_weight, grad_bias

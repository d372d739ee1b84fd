# exercise: gelu_backward
# kind: faulty
# class: in-place
# rule: the backward receives the upstream gradient grad_out and returns grad_out * g'(x)
#       (docstring); it must not overwrite the caller's grad_out. This body multiplies in place
#       (grad_out.mul_(slope)) and returns the argument itself
# shows: grad_out = ones(3), x = (0.3, 1.0, 2.5): after the call the caller's grad_out holds the
#        slopes, and a second call with the same grad_out returns slope**2
def gelu_backward(grad_out, x):
    cdf = 0.5 * (1.0 + torch.erf(x / math.sqrt(2.0)))
    density = torch.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)
    return grad_out.mul_(cdf + x * density)

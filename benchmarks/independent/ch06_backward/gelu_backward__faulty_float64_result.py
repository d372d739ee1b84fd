# exercise: gelu_backward
# kind: faulty
# class: type
# rule: module docstring "Gradients keep the dtype and device of their inputs"; this body
#       evaluates erf in float64 "for accuracy" and returns the float64 product
# shows: float32 x = randn(2, 3, 4) and grad_out: the result is float64, not float32
def gelu_backward(grad_out, x):
    u = x.double()
    cdf = 0.5 * (1.0 + torch.erf(u / math.sqrt(2.0)))
    density = torch.exp(-0.5 * u * u) / math.sqrt(2.0 * math.pi)
    return grad_out * (cdf + u * density)

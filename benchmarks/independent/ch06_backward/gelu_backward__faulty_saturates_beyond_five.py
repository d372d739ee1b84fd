# exercise: gelu_backward
# kind: faulty
# class: value
# rule: docstring: returns grad_out * g'(x) with g'(x) = Phi(x) + x*phi(x) exactly (exact GELU);
#       this body "saves work" by taking the slope as exactly 1 for x > 5 and 0 for x < -5, but
#       g'(5.5) = 1 + 5.7e-7 and g'(-5.5) = -5.7e-7 (the text: g' can exceed 1 and be negative)
# shows: x = (5.5, -5.5, 7.0), grad_out = 1 in float64: (1, 0, 1) instead of
#        (1.00000057, -5.7e-7, 1 + 6e-11); the visible check's x stays inside |x| < 5
def gelu_backward(grad_out, x):
    cdf = 0.5 * (1.0 + torch.erf(x / math.sqrt(2.0)))
    density = torch.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)
    slope = cdf + x * density
    slope = torch.where(x > 5.0, torch.ones_like(slope), slope)
    slope = torch.where(x < -5.0, torch.zeros_like(slope), slope)
    return grad_out * slope

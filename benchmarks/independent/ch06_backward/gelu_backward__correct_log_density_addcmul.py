# exercise: gelu_backward
# kind: correct
# class: value
# rule: correct: the density comes from exp of its logarithm (-x^2/2 - log(2 pi)/2), the slope
#       Phi + x*phi is fused with torch.addcmul, and grad_out is multiplied last (method chain)
# shows: -
def gelu_backward(grad_out, x):
    cdf = torch.erf(x * (1.0 / math.sqrt(2.0))).add(1.0).mul(0.5)
    log_density = x.square().mul(-0.5) - 0.5 * math.log(2.0 * math.pi)
    slope = torch.addcmul(cdf, x, torch.exp(log_density))
    return slope.mul(grad_out)

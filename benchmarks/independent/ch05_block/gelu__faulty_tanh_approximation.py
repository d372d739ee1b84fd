# exercise: gelu
# kind: faulty
# class: value
# rule: "implement exact GELU with torch.erf (not the tanh approximation, nor ReLU or SiLU)"
#       (notebook, exercise gelu; README "exact GELU"); this body is the tanh approximation.
#       It satisfies g(a) - g(-a) = a and is negative for negative inputs, so the visible check passes.
# shows: x = torch.tensor([-1.0, 1.0, 2.0, 3.0]): exact gives (-0.158655, 0.841345, 1.954500,
#        2.995950); tanh form gives about (-0.158808, 0.841192, 1.954598, 2.996363), up to ~4.7e-4 off.
def gelu(x):
    inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)
    return 0.5 * x * (1.0 + torch.tanh(inner))

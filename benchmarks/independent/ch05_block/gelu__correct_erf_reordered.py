# exercise: gelu
# kind: correct
# class: value
# rule: correct: same exact formula u * Phi(u) with Phi through torch.erf, but written as
#       x * (erf(x * sqrt(1/2)) + 1) / 2: multiplies by sqrt(0.5) instead of dividing by sqrt(2)
#       and halves last, using tensor methods.
# shows: -
def gelu(x):
    phi_twice = torch.erf(x * math.sqrt(0.5)).add(1.0)
    return x.mul(phi_twice).div(2.0)

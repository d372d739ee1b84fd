# exercise: gelu
# kind: faulty
# class: value
# rule: exact GELU is u * Phi(u), Phi the standard normal CDF, "not ... SiLU" (notebook, exercise
#       gelu); this body uses the logistic sigmoid as the gate, i.e. SiLU, which also satisfies
#       the symmetry identity and gives negative values for negative inputs.
# shows: x = torch.tensor([1.0]): exact GELU 0.841345, this body 0.731059; x = -1: -0.158655 vs
#        -0.268941.
def gelu(x):
    return x * torch.sigmoid(x)

# exercise: residual_backward
# kind: faulty
# class: value
# rule: the Jacobian is I + J_R, so the identity path contributes grad_out (docstring); this body
#       reads "I" as the number 1 (d(x)/dx = 1) and adds ones instead of the upstream gradient
# shows: grad_out = (1, 2, -3), branch = lambda g: -g: returns (0, -1, 4) instead of (0, 0, 0)
def residual_backward(grad_out, branch_backward):
    return torch.ones_like(grad_out) + branch_backward(grad_out)

# exercise: residual_backward
# kind: faulty
# class: in-place
# rule: the result is grad_out + branch_backward(grad_out) (docstring); the caller's upstream
#       gradient must stay as it was. This body accumulates into grad_out (grad_out.add_) and
#       returns the caller's tensor
# shows: grad_out = ones(3), branch = lambda g: 2 * g: returns 3s, and the caller's grad_out is
#        now 3s too (the visible check's R(x) = -x zeroes its grad_out, so its next case passes)
def residual_backward(grad_out, branch_backward):
    return grad_out.add_(branch_backward(grad_out))

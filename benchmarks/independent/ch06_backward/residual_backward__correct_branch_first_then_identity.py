# exercise: residual_backward
# kind: correct
# class: value
# rule: correct: evaluates the branch first, then adds the identity path into a fresh copy of
#       the branch's result with add_ (never touching grad_out or the branch's own tensor)
# shows: -
def residual_backward(grad_out, branch_backward):
    branch = branch_backward(grad_out)
    total = torch.empty_like(torch.broadcast_tensors(branch, grad_out)[0],
                             dtype=torch.promote_types(branch.dtype, grad_out.dtype))
    total.copy_(branch)
    total.add_(grad_out)
    return total

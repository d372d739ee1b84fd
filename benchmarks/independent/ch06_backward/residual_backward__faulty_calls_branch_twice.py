# exercise: residual_backward
# kind: faulty
# class: rule
# rule: docstring "Call branch_backward exactly once" (notebook: 只调用 branch_backward 一次); this
#       body calls it once to check it returned something and again to use the value
# shows: any grad_out with a branch that counts its calls: 2 calls (value is right)
def residual_backward(grad_out, branch_backward):
    if branch_backward(grad_out) is None:
        return grad_out.clone()
    return grad_out + branch_backward(grad_out)

# exercise: linear_backward
# kind: correct
# class: value
# rule: correct: grad_x and grad_weight by torch.einsum with ellipsis leading axes; grad_bias as a
#       row of ones times the [N, out] flattened upstream gradient (a matmul, always a new tensor,
#       also for a single vector or zero positions)
# shows: -
def linear_backward(grad_out, x, weight):
    grad_x = torch.einsum('...o,oi->...i', grad_out, weight)
    grad_weight = torch.einsum('...o,...i->oi', grad_out, x)
    flat = grad_out.reshape(-1, grad_out.shape[-1])
    ones = torch.ones(flat.shape[0], dtype=flat.dtype, device=flat.device)
    grad_bias = ones @ flat
    return grad_x, grad_weight, grad_bias

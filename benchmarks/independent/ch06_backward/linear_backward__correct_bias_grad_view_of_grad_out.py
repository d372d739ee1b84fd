# exercise: linear_backward
# kind: correct
# relabelled faulty -> correct by the course team: the contract lets grad_bias of a single
#   position be grad_out itself or a view of it (ch01's glossary; now linear_backward's docstring too)
# class: aliasing
# rule: grad_bias is a gradient of its own ("grad_out summed over every leading axis ([out])");
#       for a single vector (no leading axis) torch.einsum('...o->o') returns a VIEW of grad_out,
#       so grad_bias shares memory with the caller's upstream gradient
# shows: grad_out = randn(5), x = randn(4), weight = randn(5, 4): grad_bias.data_ptr() ==
#        grad_out.data_ptr(); an optimizer doing grad_bias.mul_(0) or += also changes grad_out
def linear_backward(grad_out, x, weight):
    grad_x = grad_out @ weight
    flat_g = grad_out.reshape(-1, weight.shape[0])
    flat_x = x.reshape(-1, weight.shape[1])
    grad_weight = flat_g.transpose(0, 1) @ flat_x
    grad_bias = torch.einsum('...o->o', grad_out)
    return grad_x, grad_weight, grad_bias

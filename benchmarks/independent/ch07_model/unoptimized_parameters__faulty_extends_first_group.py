# exercise: unoptimized_parameters
# kind: faulty
# class: in-place
# rule: "三个函数只读模型和优化器：……不改参数组" (notebook; the questions only read). To gather
#       every held tensor this body takes the list of group 0 and extends it with the other
#       groups' params, so the optimizer's first group now also holds the other groups'
#       tensors (each is then updated twice per step, with group 0's weight decay).
# shows: an SGD with two groups [weights], [biases]: the answer [] is right, but afterwards
#        len(optimizer.param_groups[0]["params"]) has grown by the number of biases.
def unoptimized_parameters(model, optimizer):
    held = optimizer.param_groups[0]["params"]
    for group in optimizer.param_groups[1:]:
        held += group["params"]
    held_ids = {id(tensor) for tensor in held}
    return [name for name, p in model.named_parameters() if p.requires_grad and id(p) not in held_ids]

# exercise: unoptimized_parameters
# kind: faulty
# class: rule
# rule: "A parameter is held when that very tensor object is in a group's "params" (compare by
#       identity, `is` ...)" (docstring; notebook: 按对象身份判断). This body compares storage
#       addresses (data_ptr()), so a different tensor that shares the parameter's memory counts
#       as the parameter.
# shows: opt = SGD([p for n, p in lm.named_parameters() if n != "head.weight"]
#        + [lm.head.weight.detach().requires_grad_()], lr=0.1): the optimizer holds a detached
#        alias (another tensor object; step() would update it, not lm.head.weight's autograd
#        leaf) and the answer is ['head.weight']; this body returns [].
def unoptimized_parameters(model, optimizer):
    held = set()
    for group in optimizer.param_groups:
        for tensor in group["params"]:
            held.add(tensor.data_ptr())
    return [name for name, p in model.named_parameters() if p.requires_grad and p.data_ptr() not in held]

# exercise: init_normal
# kind: faulty
# class: aliasing
# rule: "返回 weight 这个对象本身...模型里的参数对象要保持不变，不能换成一个新张量"; to avoid the
#       requires_grad error this body switches to weight.data for tensors that require grad and returns
#       that, so for an nn.Parameter the returned object is a plain tensor, not the Parameter passed in.
# shows: p = torch.nn.Parameter(torch.zeros(3, 2)); out = init_normal_(p, generator=g) -> out is not p,
#        isinstance(out, torch.nn.Parameter) is False and out.requires_grad is False.
def init_normal_(weight, std=INIT_STD, generator=None):
    if weight.requires_grad:
        weight = weight.data
    weight.normal_(0.0, std, generator=generator)
    return weight

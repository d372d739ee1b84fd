# exercise: unreached_parameters
# kind: faulty
# class: range
# rule: a parameter is listed when ".grad is None or ... every entry of their gradient is zero"
#       (docstring; notebook: "“全为 0”指每个元素恰好为 0", a gradient that is small but not 0
#       means the batch reached it). This body tests p.grad.norm() == 0: in float32 the squares
#       of entries below ~1e-23 underflow to 0, so a tiny but nonzero gradient is called zero.
# shows: a parameter whose gradient is filled with 1e-25 (e.g. a layer reading its input times
#        1e-25, like the check's 1e-9 setup with a smaller scale): listed as unreached, though no
#        entry is zero. The visible 1e-9 case passes (1e-18 squares do not underflow).
def unreached_parameters(model):
    names = []
    for name, parameter in model.named_parameters():
        if not parameter.requires_grad:
            continue
        if parameter.grad is None or parameter.grad.norm() == 0:
            names.append(name)
    return names

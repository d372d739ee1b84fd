# exercise: unreached_parameters
# kind: faulty
# class: value
# rule: listed only when "every entry of their gradient is zero" (docstring). This body tests
#       p.grad.sum() == 0, so a gradient whose positive and negative entries cancel is reported
#       as unreached.
# shows: lin = nn.Linear(2, 1, bias=False); lin(torch.tensor([[1., -1.]])).sum().backward():
#        lin.weight.grad is [[1., -1.]] (sum 0), listed as unreached; the answer is [].
def unreached_parameters(model):
    names = []
    for name, parameter in model.named_parameters():
        if not parameter.requires_grad:
            continue
        if parameter.grad is None or parameter.grad.sum().item() == 0:
            names.append(name)
    return names

# exercise: parameter_groups
# kind: correct
# class: rule
# rule: correct; collects the ids of every nn.Linear's `weight` from model.modules() first, then
#       makes one pass over named_parameters() (which already yields each parameter once),
#       routing each trainable parameter by id membership; names and params are filled together.
def parameter_groups(model, weight_decay):
    linear_weight_ids = set()
    for module in model.modules():
        if isinstance(module, nn.Linear) and isinstance(getattr(module, "weight", None), torch.Tensor):
            linear_weight_ids.add(id(module.weight))
    buckets = {True: ([], []), False: ([], [])}
    for name, parameter in model.named_parameters():
        if not parameter.requires_grad:
            continue
        params, names = buckets[id(parameter) in linear_weight_ids]
        params.append(parameter)
        names.append(name)
    return [
        {"params": buckets[True][0], "names": buckets[True][1], "weight_decay": weight_decay},
        {"params": buckets[False][0], "names": buckets[False][1], "weight_decay": 0.0},
    ]

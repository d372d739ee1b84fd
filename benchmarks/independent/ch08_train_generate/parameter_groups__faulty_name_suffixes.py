# exercise: parameter_groups
# kind: faulty
# class: rule
# rule: the first group holds "the weight matrix of every nn.Linear layer"; the notebook says to
#       decide by the owning module (isinstance(module, nn.Linear)), "也不要只看名字".  This body
#       matches the names of this course's layers (qkv/proj/fc1/fc2/head), so a Linear with any
#       other name is not decayed.
# shows: model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2)): group 0 is empty and
#        "0.weight", "2.weight" land in the no-decay group (on TransformerLM it happens to be right).
def parameter_groups(model, weight_decay):
    suffixes = ("qkv.weight", "proj.weight", "fc1.weight", "fc2.weight", "head.weight")
    decay, decay_names, rest, rest_names = [], [], [], []
    for name, parameter in model.named_parameters():
        if not parameter.requires_grad:
            continue
        if name.endswith(suffixes):
            decay.append(parameter)
            decay_names.append(name)
        else:
            rest.append(parameter)
            rest_names.append(name)
    return [{"params": decay, "names": decay_names, "weight_decay": weight_decay},
            {"params": rest, "names": rest_names, "weight_decay": 0.0}]

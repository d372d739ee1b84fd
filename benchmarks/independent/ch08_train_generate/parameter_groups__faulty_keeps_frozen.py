# exercise: parameter_groups
# kind: faulty
# class: rule
# rule: "Trainable parameters only (requires_grad)" (docstring; notebook "只收可训练的参数").
#       This body sorts every parameter into a group and never looks at requires_grad.
# shows: the tiny LM with net.position_embedding.weight.requires_grad_(False): the frozen table is
#        listed in the no-decay group (and handed to the optimiser).
def parameter_groups(model, weight_decay):
    owners = dict(model.named_modules())
    decay, decay_names, rest, rest_names = [], [], [], []
    for name, parameter in model.named_parameters():
        owner_name, _, kind = name.rpartition(".")
        if kind == "weight" and isinstance(owners[owner_name], nn.Linear):
            decay.append(parameter)
            decay_names.append(name)
        else:
            rest.append(parameter)
            rest_names.append(name)
    return [{"params": decay, "names": decay_names, "weight_decay": weight_decay},
            {"params": rest, "names": rest_names, "weight_decay": 0.0}]

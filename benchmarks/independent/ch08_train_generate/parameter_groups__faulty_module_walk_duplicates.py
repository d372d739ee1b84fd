# exercise: parameter_groups
# kind: faulty
# class: rule
# rule: "each once, in model.named_parameters() order" (docstring).  This body walks the modules
#       and reads each module's own parameters (recurse=False); a parameter shared by two modules
#       (tied weights) is then listed twice.
# shows: s = nn.Sequential(nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 3)); s[2].weight = s[0].weight:
#        group 0 lists the shared weight twice (names "0.weight", "2.weight"), while
#        named_parameters() yields it once; AdamW warns about duplicate parameters
#        ("optimizer contains a parameter group with duplicate parameters").
def parameter_groups(model, weight_decay):
    decay, decay_names, rest, rest_names = [], [], [], []
    for module_name, module in model.named_modules():
        for local_name, parameter in module.named_parameters(recurse=False):
            if not parameter.requires_grad:
                continue
            name = f"{module_name}.{local_name}" if module_name else local_name
            if isinstance(module, nn.Linear) and local_name == "weight":
                decay.append(parameter)
                decay_names.append(name)
            else:
                rest.append(parameter)
                rest_names.append(name)
    return [{"params": decay, "names": decay_names, "weight_decay": weight_decay},
            {"params": rest, "names": rest_names, "weight_decay": 0.0}]

# exercise: unoptimized_parameters
# kind: correct
# class: value
# rule: correct. Differs from the obvious set of id()s: it flattens every group's "params" into
#       one list and tests membership with any(p is q ...), the identity operator itself.
# shows: -- (correct body: passes check_unoptimized_parameters, including the copied-table case)
def unoptimized_parameters(model, optimizer):
    held = [tensor for group in optimizer.param_groups for tensor in group["params"]]
    missing = []
    for name, parameter in model.named_parameters():
        if parameter.requires_grad and not any(parameter is tensor for tensor in held):
            missing.append(name)
    return missing

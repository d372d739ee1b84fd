# exercise: unreached_parameters
# kind: correct
# class: value
# rule: correct. Differs from the obvious `(p.grad == 0).all()`: an explicit loop that skips frozen
#       parameters with `continue` and tests "every entry zero" with torch.count_nonzero(...) == 0
#       (exact, so a gradient of 1e-30 is not zero, and no sum/norm that could cancel or underflow).
# shows: -- (correct body: passes check_unreached_parameters)
def unreached_parameters(model):
    names = []
    for name, parameter in model.named_parameters():
        if not parameter.requires_grad:
            continue
        gradient = parameter.grad
        if gradient is None:
            names.append(name)
        elif int(torch.count_nonzero(gradient)) == 0:
            names.append(name)
    return names

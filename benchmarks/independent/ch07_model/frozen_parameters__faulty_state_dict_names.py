# exercise: frozen_parameters
# kind: faulty
# class: value
# rule: "Every list names parameters as model.named_parameters() does" (audit.py docstring;
#       notebook: "named_parameters() 给出的名字"). This body pairs model.state_dict()'s keys with
#       model.parameters() by position; state_dict also lists persistent buffers (and every name
#       of a shared tensor), so after the first buffer the names no longer belong to the
#       tensors.
# shows: nn.Sequential(nn.BatchNorm1d(3), nn.Linear(3, 3)) with the Linear's weight frozen:
#        returns ['0.running_mean'] (a buffer, not a parameter) instead of ['1.weight']. For
#        TransformerLM (no persistent buffers) and the visible checks' toy it happens to agree.
def frozen_parameters(model):
    names = list(model.state_dict().keys())
    frozen = []
    for name, parameter in zip(names, model.parameters()):
        if not parameter.requires_grad:
            frozen.append(name)
    return frozen

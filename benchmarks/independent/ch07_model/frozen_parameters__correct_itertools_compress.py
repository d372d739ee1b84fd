# exercise: frozen_parameters
# kind: correct
# class: value
# rule: correct. Differs from the obvious list comprehension: the (name, tensor) pairs are
#       materialised once and the names are selected with itertools.compress against a list of
#       "is frozen" flags; works for a model without parameters too.
# shows: -- (correct body: passes check_frozen_parameters)
def frozen_parameters(model):
    import itertools

    pairs = list(model.named_parameters())
    names = [name for name, _ in pairs]
    frozen = [not tensor.requires_grad for _, tensor in pairs]
    return list(itertools.compress(names, frozen))

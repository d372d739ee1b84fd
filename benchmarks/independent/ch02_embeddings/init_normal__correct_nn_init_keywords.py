# exercise: init_normal
# kind: correct
# class: value
# rule: uses torch.nn.init.normal_ (which writes under no_grad itself) with keyword arguments instead of
#       weight.normal_ inside an explicit torch.no_grad() block; same sampler, same generator, returns
#       the very tensor it was given.
# shows: n/a (correct body)
def init_normal_(weight, std=INIT_STD, generator=None):
    torch.nn.init.normal_(weight, mean=0.0, std=std, generator=generator)
    return weight

# exercise: init_normal
# kind: faulty
# class: hidden-state
# rule: "generator=None 时才用全局随机数发生器"; for reproducibility this body keeps its own generator in
#       module state and uses it when generator is None, so with generator=None the numbers ignore the
#       global RNG (torch.manual_seed has no effect) and depend on how often it was called before.
# shows: torch.manual_seed(0); init_normal_(torch.zeros(4, 4)) differs from
#        torch.manual_seed(0); torch.zeros(4, 4).normal_(0, 0.02); two calls after the same
#        torch.manual_seed(0) also give different tables.
def init_normal_(weight, std=INIT_STD, generator=None):
    if generator is None:
        generator = globals().setdefault("_init_default_generator", torch.Generator().manual_seed(1234))
    with torch.no_grad():
        weight.normal_(0.0, std, generator=generator)
    return weight

# exercise: init_normal
# kind: faulty
# class: rule
# rule: the docstring: "Fill `weight` in place with N(0, std^2) samples drawn ... by torch's own normal
#       sampling (weight.normal_ or torch.nn.init.normal_), so a seed gives the reference's numbers
#       exactly"; this body uses torch.nn.init.trunc_normal_ with its default cut at [-2, 2] (the usual
#       "GPT-style" call). That is not N(0, std^2): every sample beyond +-2 is redrawn, so for a large std
#       the numbers differ (in torch 2.13 it matches normal_ bit for bit while nothing falls outside
#       [-2, 2]; older torch versions sample it through uniform + erfinv and differ at every std).
# shows: init_normal_(torch.zeros(256, 64), std=1.0, generator=torch.Generator().manual_seed(11)) has no
#        value beyond +-2 and differs from torch.zeros(256, 64).normal_(0, 1.0, generator=seed 11)
#        (max difference about 5).
def init_normal_(weight, std=INIT_STD, generator=None):
    torch.nn.init.trunc_normal_(weight, mean=0.0, std=std, generator=generator)
    return weight

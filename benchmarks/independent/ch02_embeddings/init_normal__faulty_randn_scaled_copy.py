# exercise: init_normal
# kind: faulty
# class: type
# rule: "weight.normal_ or torch.nn.init.normal_, so a seed gives the reference's numbers exactly" /
#       "与参考实现、与同学的表逐位相同"; this body draws torch.randn in the default float32, multiplies by std
#       and copies into weight: a float64 weight gets float32-derived numbers from another stream, and
#       small float32 tensors differ in the last bits.
# shows: init_normal_(torch.zeros(256, 64, dtype=torch.float64), generator=torch.Generator().manual_seed(7))
#        differs from weight.normal_(0, 0.02, generator=seed 7) by up to ~0.1; for torch.zeros(3, 2)
#        (float32) the values differ by 1 ulp.
def init_normal_(weight, std=INIT_STD, generator=None):
    draws = torch.randn(tuple(weight.shape), generator=generator, device=weight.device) * std
    with torch.no_grad():
        weight.copy_(draws)
    return weight

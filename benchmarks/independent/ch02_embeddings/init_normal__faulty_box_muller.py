# exercise: init_normal
# kind: faulty
# class: rule
# rule: "数字用 PyTorch 自己的正态抽样（normal_）从传入的 generator 抽取...自己从均匀数变换出正态数
#       （Box–Muller 等）分布虽然对，却是另一组数，评分器按“数值不同”判错"; this body draws uniforms from
#       the generator and applies Box-Muller itself: right distribution, different numbers.
# shows: init_normal_(torch.zeros(4, 4), generator=torch.Generator().manual_seed(0)) differs from
#        torch.zeros(4, 4).normal_(0, 0.02, generator=torch.Generator().manual_seed(0)) everywhere.
def init_normal_(weight, std=INIT_STD, generator=None):
    import math
    n = weight.numel()
    half = (n + 1) // 2
    u1 = torch.rand(half, generator=generator, dtype=torch.float64, device=weight.device).clamp_min(1e-300)
    u2 = torch.rand(half, generator=generator, dtype=torch.float64, device=weight.device)
    radius = torch.sqrt(-2.0 * torch.log(u1))
    angle = 2.0 * math.pi * u2
    z = torch.cat([radius * torch.cos(angle), radius * torch.sin(angle)])[:n]
    with torch.no_grad():
        weight.copy_((z * std).reshape(weight.shape))
    return weight

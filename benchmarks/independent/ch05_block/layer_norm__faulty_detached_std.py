# exercise: layer_norm
# kind: faulty
# class: gradient
# rule: LayerNorm is part of the trained model and chapter 6 "pushes the gradient back through
#       LayerNorm along the same computation graph" (notebook summary); the standard deviation is a
#       function of x and must stay in the graph. This body detaches sqrt(v + eps), treating it as
#       a constant.
# shows: x = torch.randn(2, 3, 4, dtype=torch.float64, requires_grad=True),
#        loss = (LayerNorm(4)(x) * torch.randn(2, 3, 4)).sum(): forward values are identical, but
#        x.grad differs from the true gradient (the path through the variance is missing;
#        torch.autograd.gradcheck against the correct formula fails).
def forward(self, x):
    mean = x.mean(dim=-1, keepdim=True)
    centred = x - mean
    std = torch.sqrt((centred * centred).mean(dim=-1, keepdim=True) + self.eps).detach()
    return centred / std * self.weight + self.bias

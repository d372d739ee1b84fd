# exercise: layer_norm
# kind: correct
# class: value
# rule: correct: mean as an explicit sum divided by d, the sum of squared centred coordinates via
#       einsum over the feature axis, and gamma/beta applied with a single torch.addcmul.
# shows: -
def forward(self, x):
    width = x.shape[-1]
    mean = x.sum(dim=-1, keepdim=True) / width
    centred = x - mean
    variance = torch.einsum("...i,...i->...", centred, centred) / width
    standardised = centred / torch.sqrt(variance + self.eps).unsqueeze(-1)
    return torch.addcmul(self.bias, standardised, self.weight)

# exercise: layer_norm
# kind: faulty
# class: range
# rule: the notebook defines v as the mean of the squared CENTRED coordinates and states shift
#       invariance (adding a constant to every feature changes nothing); this body uses the
#       one-pass formula E[x^2] - E[x]^2, which cancels catastrophically in float32 when the
#       features share a large offset.
# shows: x = 1e4 + torch.tensor([[0.0, 0.5, 1.0, 1.5]]) (float32): correct output about
#        (-1.342, -0.447, 0.447, 1.342); this body gives about (-0.265, -0.088, 0.088, 0.265).
#        Also x = 300 + torch.tensor([[0.0, 0.1, 0.2, 0.3]]): about (-0.980, ...) instead of -1.341.
def forward(self, x):
    mean = x.mean(dim=-1, keepdim=True)
    variance = (x * x).mean(dim=-1, keepdim=True) - mean * mean
    return (x - mean) / torch.sqrt(variance + self.eps) * self.weight + self.bias

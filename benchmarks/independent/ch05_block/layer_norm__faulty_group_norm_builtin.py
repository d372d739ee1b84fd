# exercise: layer_norm
# kind: faulty
# class: rule
# rule: the exercise says to write the operations yourself: "do not call
#       torch.nn.functional.layer_norm, torch.layer_norm, nn.LayerNorm or other built-in
#       normalisations (group norm, batch norm)"; such a call scores 0. This body reshapes every
#       position into one group and calls F.group_norm (values are correct).
# shows: any input, e.g. torch.randn(2, 3, 4): right values, but the forbidden built-in
#        F.group_norm is called.
def forward(self, x):
    width = x.shape[-1]
    flat = x.reshape(-1, 1, width)
    normed = F.group_norm(flat, 1, eps=self.eps)
    return normed.reshape(x.shape) * self.weight + self.bias

# exercise: split_heads
# kind: correct
# class: value
# rule: correct; cuts the feature axis into n_heads contiguous chunks of width head_dim with
#       Tensor.split and stacks them on a new axis 1, instead of view + transpose(1, 2)
def split_heads(self, t):
    pieces = t.split(self.head_dim, dim=-1)
    return torch.stack(pieces, dim=1)

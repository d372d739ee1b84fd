# exercise: merge_heads
# kind: correct
# class: value
# rule: correct; unbinds the head axis and concatenates the per-head [B, T, d_h] blocks along the feature
#       axis, instead of transpose(1, 2) + reshape
def merge_heads(self, t):
    return torch.cat(torch.unbind(t, dim=1), dim=-1)

# exercise: merge_heads
# kind: faulty
# class: in-place
# rule: merge_heads returns a new [B, T, d] tensor; the caller's [B, h, T, d_h] tensor must keep its shape;
#       transpose_ (to "save a copy") swaps the axes of the caller's tensor itself
# shows: s = torch.zeros(1, 3, 5, 2); a.merge_heads(s) is right, but s.shape is now (1, 5, 3, 2)
def merge_heads(self, t):
    batch, heads, length, head_dim = t.shape
    return t.transpose_(1, 2).reshape(batch, length, heads * head_dim)

# exercise: merge_heads
# kind: faulty
# class: value
# rule: docstring "the inverse of split_heads"; notebook section 5: transpose(1, 2) back before reshape;
#       reshaping [B, h, T, d_h] straight to [B, T, d] regroups numbers in memory order
# shows: split = torch.arange(24.).reshape(2, 3, 2, 2).transpose(1, 2) (a real split of [2, 3, 4]):
#        merge gives position 0 of sample 0 = [0, 1, 4, 5] instead of [0, 1, 2, 3]
def merge_heads(self, t):
    batch, heads, length, head_dim = t.shape
    return t.reshape(batch, length, heads * head_dim)

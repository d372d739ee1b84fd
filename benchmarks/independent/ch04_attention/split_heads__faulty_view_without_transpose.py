# exercise: split_heads
# kind: faulty
# class: value
# rule: docstring "head j holds features j*d_h .. (j+1)*d_h - 1"; notebook section 5 warns that viewing
#       [B, T, d] straight to [B, h, T, d_h] has the right shape but mixes positions
# shows: t = torch.arange(24.).reshape(2, 3, 4), h = 2: head 0 of sample 0 is [[0,1],[2,3],[4,5]]
#        instead of [[0,1],[4,5],[8,9]]
def split_heads(self, t):
    batch, length, _ = t.shape
    return t.reshape(batch, self.n_heads, length, self.head_dim)

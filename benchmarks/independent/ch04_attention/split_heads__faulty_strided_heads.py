# exercise: split_heads
# kind: faulty
# class: value
# rule: docstring "head j holds features j*d_h .. (j+1)*d_h - 1" (contiguous blocks); this body reshapes the
#       feature axis as [d_h, h], so head j holds features j, j + h, j + 2h, ...
# shows: t = torch.arange(24.).reshape(2, 3, 4), h = 2: head 0 of sample 0 is [[0,2],[4,6],[8,10]]
#        instead of [[0,1],[4,5],[8,9]]
def split_heads(self, t):
    batch, length, _ = t.shape
    return t.reshape(batch, length, self.head_dim, self.n_heads).permute(0, 3, 1, 2)

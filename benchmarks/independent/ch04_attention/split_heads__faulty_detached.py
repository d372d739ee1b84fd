# exercise: split_heads
# kind: faulty
# class: gradient
# rule: split_heads is applied to q, k, v inside the trained attention (notebook section 6 and the forward's
#       step 1); detaching the heads stops every gradient to self.qkv.weight
# shows: t = torch.randn(2, 3, 4, requires_grad=True); a.split_heads(t).requires_grad is False
def split_heads(self, t):
    batch, length, _ = t.shape
    heads = t.detach().view(batch, length, self.n_heads, self.head_dim)
    return heads.transpose(1, 2)

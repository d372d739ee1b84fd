# exercise: split_heads
# kind: faulty
# class: hidden-state
# rule: split_heads is a pure re-arrangement of its argument t ("[B, T, d] -> [B, h, T, d_h]"); this body
#       memoises the result on the module keyed by t's shape, so a later tensor of the same shape gets the
#       first tensor's heads (in forward, k and v come back equal to q)
# shows: a = CausalSelfAttention(Config(10, 6, 4, 2, 1, 8)); a.split_heads(torch.zeros(1, 3, 4)) then
#        a.split_heads(torch.ones(1, 3, 4)) returns zeros
def split_heads(self, t):
    memo = self.__dict__.setdefault("_split_memo", {})
    key = tuple(t.shape)
    if key not in memo:
        batch, length, _ = t.shape
        memo[key] = t.view(batch, length, self.n_heads, self.head_dim).transpose(1, 2)
    return memo[key]

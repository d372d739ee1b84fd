# exercise: attention
# kind: correct
# class: value
# rule: correct; reads the past length from the cache before projecting, slices the buffer's rows and
#       columns in two steps with an explicit start offset, and fills with masked_fill on the negated slice
def forward(self, x, past_key_value=None, use_cache=False):
    past = 0 if past_key_value is None else past_key_value[0].size(2)
    steps = x.size(1)
    width = self.n_heads * self.head_dim
    fused = self.qkv(x)
    q = self.split_heads(fused[..., :width])
    k = self.split_heads(fused[..., width:2 * width])
    v = self.split_heads(fused[..., 2 * width:])
    if past:
        k = torch.cat([past_key_value[0], k], dim=2)
        v = torch.cat([past_key_value[1], v], dim=2)
    rows = self.causal_mask[past:past + steps]
    allowed = rows[:, :past + steps]
    scores = attention_scores(q, k).masked_fill(allowed.logical_not(), float("-inf"))
    weights = self.attn_dropout(stable_softmax(scores))
    out = self.proj(self.merge_heads(torch.matmul(weights, v)))
    if use_cache:
        return out, (k, v)
    return out, None

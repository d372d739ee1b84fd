# exercise: attention
# kind: faulty
# class: rule
# rule: docstring "Built from this chapter's parts, called by name: ... attention_scores ..." and the notebook
#       ("评分时，attention_scores ... 会换成评分器自己的替身"); this body computes q k^T / sqrt(d_h) inline
# shows: with attention_scores replaced by another scoring function (e.g. minus half the squared distance),
#        this body's outputs do not change, unlike a forward that calls attention_scores
def forward(self, x, past_key_value=None, use_cache=False):
    d = x.shape[-1]
    q, k, v = (self.split_heads(part) for part in self.qkv(x).split(d, dim=-1))
    if past_key_value is not None:
        k = torch.cat([past_key_value[0], k], dim=2)
        v = torch.cat([past_key_value[1], v], dim=2)
    T, total = q.shape[2], k.shape[2]
    mask = self.causal_mask[total - T:total, :total]
    scores = (q @ k.transpose(-2, -1)) / math.sqrt(self.head_dim)
    scores = scores.masked_fill(~mask, float("-inf"))
    weights = self.attn_dropout(stable_softmax(scores))
    out = self.proj(self.merge_heads(weights @ v))
    return out, ((k, v) if use_cache else None)

# exercise: attention
# kind: faulty
# class: value
# rule: notebook section 6 / exercise step 1: the fused output is cut "依次是 q、k、v" (first d features are
#       q, then k, then v); this body takes the first third as k and the second as q
# shows: with the real attention_scores / stable_softmax, a Config(10, 6, 4, 2, 1, 8) module with random
#        weights and x = torch.randn(1, 3, 4): position 1 and 2 outputs differ from the reference order
def forward(self, x, past_key_value=None, use_cache=False):
    d = x.shape[-1]
    k, q, v = (self.split_heads(part) for part in self.qkv(x).split(d, dim=-1))
    if past_key_value is not None:
        k = torch.cat([past_key_value[0], k], dim=2)
        v = torch.cat([past_key_value[1], v], dim=2)
    T, total = q.shape[2], k.shape[2]
    mask = self.causal_mask[total - T:total, :total]
    scores = attention_scores(q, k).masked_fill(~mask, float("-inf"))
    weights = self.attn_dropout(stable_softmax(scores))
    out = self.proj(self.merge_heads(weights @ v))
    return out, ((k, v) if use_cache else None)

# exercise: attention
# kind: faulty
# class: rule
# rule: exercise attention step 3: "用 self.causal_mask[...] 把不允许的位置填成 -inf" (also notebook section 3
#       and the summary: "填成 -∞"); this body fills with -1e9, so the scores handed to stable_softmax
#       hold -1e9 instead of -inf
# shows: Config(10, 6, 4, 1, 1, 8), qkv rows 0-3 = 1e5*I, rows 4-7 = -1e5*I, rows 8-11 = I, proj = I,
#        x = [[[1]*4, [2]*4, [3]*4]]: allowed scores are about -2e10 < -1e9, so row 0 outputs 2.5s (it
#        reads the future) instead of 1s; also the scores handed to stable_softmax contain no -inf
def forward(self, x, past_key_value=None, use_cache=False):
    d = x.shape[-1]
    q, k, v = (self.split_heads(part) for part in self.qkv(x).split(d, dim=-1))
    if past_key_value is not None:
        k = torch.cat([past_key_value[0], k], dim=2)
        v = torch.cat([past_key_value[1], v], dim=2)
    T, total = q.shape[2], k.shape[2]
    mask = self.causal_mask[total - T:total, :total]
    scores = attention_scores(q, k).masked_fill(~mask, -1e9)
    weights = self.attn_dropout(stable_softmax(scores))
    out = self.proj(self.merge_heads(weights @ v))
    return out, ((k, v) if use_cache else None)

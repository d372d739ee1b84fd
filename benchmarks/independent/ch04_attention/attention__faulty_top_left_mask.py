# exercise: attention
# kind: faulty
# class: value
# rule: notebook section 3.1: "有缓存时不能再从左上角切", the slice is causal_mask[total - T : total, :total];
#       this body always takes the first T rows
# shows: 2 cached positions and one new token: its mask row is [True, False, False], so the new token
#        only sees position 0 and its output differs from the full forward's last row
def forward(self, x, past_key_value=None, use_cache=False):
    d = x.shape[-1]
    q, k, v = (self.split_heads(part) for part in self.qkv(x).split(d, dim=-1))
    if past_key_value is not None:
        k = torch.cat([past_key_value[0], k], dim=2)
        v = torch.cat([past_key_value[1], v], dim=2)
    T, total = q.shape[2], k.shape[2]
    mask = self.causal_mask[:T, :total]
    scores = attention_scores(q, k).masked_fill(~mask, float("-inf"))
    weights = self.attn_dropout(stable_softmax(scores))
    out = self.proj(self.merge_heads(weights @ v))
    return out, ((k, v) if use_cache else None)

# exercise: attention
# kind: faulty
# class: rule
# rule: exercise attention: "掩码必须取自注册好的缓冲区 self.causal_mask：评分器会把缓冲区换成另一种合法的掩码";
#       this body builds its own lower-triangular mask each call (same values as the default buffer)
# shows: a.causal_mask = a.causal_mask & a.causal_mask.float().triu(-1).bool() (a window of 2, a legal
#        buffer): position 2 still attends to position 0, unlike a body that reads the buffer
def forward(self, x, past_key_value=None, use_cache=False):
    d = x.shape[-1]
    q, k, v = (self.split_heads(part) for part in self.qkv(x).split(d, dim=-1))
    if past_key_value is not None:
        k = torch.cat([past_key_value[0], k], dim=2)
        v = torch.cat([past_key_value[1], v], dim=2)
    T, total = q.shape[2], k.shape[2]
    mask = torch.ones(T, total, dtype=torch.bool, device=x.device).tril(diagonal=total - T)
    scores = attention_scores(q, k).masked_fill(~mask, float("-inf"))
    weights = self.attn_dropout(stable_softmax(scores))
    out = self.proj(self.merge_heads(weights @ v))
    return out, ((k, v) if use_cache else None)

# exercise: attention
# kind: correct
# class: value
# rule: correct; chunks the fused projection with torch.chunk, masks with torch.where against a -inf scalar
#       (instead of masked_fill), computes total from the concatenated keys, and multiplies the weights by v
#       with torch.einsum instead of @
def forward(self, x, past_key_value=None, use_cache=False):
    q, k, v = (self.split_heads(part) for part in torch.chunk(self.qkv(x), 3, dim=-1))
    if past_key_value is not None:
        cached_k, cached_v = past_key_value
        k = torch.cat((cached_k, k), dim=2)
        v = torch.cat((cached_v, v), dim=2)
    length, total = q.shape[-2], k.shape[-2]
    allowed = self.causal_mask[total - length:total, :total]
    scores = attention_scores(q, k)
    scores = torch.where(allowed, scores, float("-inf"))
    weights = self.attn_dropout(stable_softmax(scores))
    mixed = torch.einsum("bhqk,bhkd->bhqd", weights, v)
    present = (k, v) if use_cache else None
    return self.proj(self.merge_heads(mixed)), present

# exercise: attention
# kind: faulty
# class: hidden-state
# rule: the class docstring: "past_key_value is (keys, values)" and the exercise step 2: the past k, v passed
#       in are concatenated; this body keeps the last present on the module and uses it instead of the
#       past_key_value argument whenever one is given
# shows: xa, xb = torch.randn(1, 3, 4), torch.randn(1, 3, 4); pa = a(xa, None, True)[1]; a(xb, None, True);
#        a(ya, pa, True) attends to xb's keys/values, not xa's, so it differs from a(cat([xa, ya], 1))[0][:, 3]
def forward(self, x, past_key_value=None, use_cache=False):
    d = x.shape[-1]
    q, k, v = (self.split_heads(part) for part in self.qkv(x).split(d, dim=-1))
    if past_key_value is not None:
        past_k, past_v = getattr(self, "_last_present", None) or past_key_value
        k = torch.cat([past_k, k], dim=2)
        v = torch.cat([past_v, v], dim=2)
    T, total = q.shape[2], k.shape[2]
    mask = self.causal_mask[total - T:total, :total]
    scores = attention_scores(q, k).masked_fill(~mask, float("-inf"))
    weights = self.attn_dropout(stable_softmax(scores))
    out = self.proj(self.merge_heads(weights @ v))
    present = (k, v) if use_cache else None
    if use_cache:
        self._last_present = present
    return out, present

# exercise: block
# kind: faulty
# class: gradient
# rule: "return (Y, present), handing back the present (KV cache) given by the attention as is"
#       (notebook, exercise block); this body detaches the cached keys/values, cutting the graph
#       from the cache back to the attention projections (values unchanged).
# shows: block = TransformerBlock(Config(10, 6, 4, 2, 2, 8)); x = torch.randn(2, 3, 4,
#        requires_grad=True); _, present = block(x, None, True): present[0].requires_grad is False
#        (should be True, with a graph back to x and attention.qkv.weight); values are identical.
def forward(self, hidden, past_key_value=None, use_cache=False):
    increment, present = self.attention(self.ln_attention(hidden), past_key_value, use_cache)
    if present is not None:
        present = tuple(t.detach() for t in present)
    u = hidden + increment
    return u + self.feedforward(self.ln_feedforward(u)), present

# exercise: block
# kind: faulty
# class: value
# rule: "Y = U + F(LN2(U))": "the second normalisation reads U, which already includes the
#       attention increment, NOT X" (notebook section 5, README "LN2 reads U"); this body feeds
#       LN2(X) to the FFN.
# shows: any block whose attention increment is non-zero, e.g. TransformerBlock(Config(10, 6, 4,
#        2, 2, 8)) on torch.randn(2, 3, 4): the output differs from X + A + F(LN2(X + A)).
def forward(self, hidden, past_key_value=None, use_cache=False):
    increment, present = self.attention(self.ln_attention(hidden), past_key_value, use_cache)
    u = hidden + increment
    return u + self.feedforward(self.ln_feedforward(hidden)), present

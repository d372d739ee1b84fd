# exercise: block
# kind: faulty
# class: in-place
# rule: the block computes U = X + A(LN1(X)) and Y = U + F(LN2(U)) as new tensors (returns
#       "(Y, present)"); this body accumulates both increments into the caller's tensor with +=,
#       so the caller's X is overwritten by Y (and Y is the argument itself).
# shows: x = torch.randn(2, 3, 4); y, _ = block(x): x now equals y; calling block(x) again gives a
#        different result; with x.requires_grad a leaf, autograd raises on the in-place add.
def forward(self, hidden, past_key_value=None, use_cache=False):
    increment, present = self.attention(self.ln_attention(hidden), past_key_value, use_cache)
    hidden += increment
    hidden += self.feedforward(self.ln_feedforward(hidden))
    return hidden, present

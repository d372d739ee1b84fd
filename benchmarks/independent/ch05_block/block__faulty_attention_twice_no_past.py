# exercise: block
# kind: faulty
# class: rule
# rule: "self.attention(x, past_key_value, use_cache) returns (increment, present)" and the
#       past_key_value must be passed on to attention (notebook, exercise block: one call, then
#       unpack); this body computes the increment with a call that ignores the cache and makes a
#       second call only to obtain present.
# shows: block(x[:, :2], None, True) -> past; block(x[:, 2:], past, True)[0] differs from
#        block(x)[0][:, 2:] because the third position's attention did not see positions 0..1.
def forward(self, hidden, past_key_value=None, use_cache=False):
    normed = self.ln_attention(hidden)
    increment = self.attention(normed)[0]
    present = self.attention(normed, past_key_value, use_cache)[1]
    u = hidden + increment
    return u + self.feedforward(self.ln_feedforward(u)), present

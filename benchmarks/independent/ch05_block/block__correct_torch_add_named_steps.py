# exercise: block
# kind: correct
# class: value
# rule: correct: same pre-LN wiring, but both residual sums are written with torch.add / Tensor.add
#       on separately named branch outputs, and the pair is built with tuple((...)).
# shows: -
def forward(self, hidden, past_key_value=None, use_cache=False):
    attention_in = self.ln_attention(hidden)
    attention_out = self.attention(attention_in, past_key_value, use_cache)
    increment, present = attention_out[0], attention_out[1]
    after_attention = torch.add(hidden, increment)
    ffn_increment = self.feedforward(self.ln_feedforward(after_attention))
    output = after_attention.add(ffn_increment)
    return tuple((output, present))

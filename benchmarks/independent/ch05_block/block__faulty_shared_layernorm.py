# exercise: block
# kind: faulty
# class: rule
# rule: "each block has two mutually independent LayerNorms" (notebook section 1 and 5, README
#       "two independent LayerNorms (LN2 reads U)"); this body uses self.ln_attention for both
#       sub-layers and never calls self.ln_feedforward.
# shows: at initialisation both LNs are (1, 0), so values agree; set
#        block.ln_feedforward.weight.data.fill_(2.0) (or train a step) and the output ignores it;
#        block.ln_feedforward.weight never gets a gradient.
def forward(self, hidden, past_key_value=None, use_cache=False):
    increment, present = self.attention(self.ln_attention(hidden), past_key_value, use_cache)
    u = hidden + increment
    return u + self.feedforward(self.ln_attention(u)), present

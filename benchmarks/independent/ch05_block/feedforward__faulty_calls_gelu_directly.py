# exercise: feedforward
# kind: faulty
# class: rule
# rule: "FeedForward.forward: fc1 -> self.activation -> fc2 -> self.dropout" (notebook, exercise
#       feedforward; the visible check's message: "call self.activation, not gelu directly");
#       this body calls the module-level gelu function instead of the self.activation submodule.
# shows: with ffn.activation replaced by another module (e.g. the visible check's sin double, or
#        any activation a test installs) the output ignores it; with the real GELU values agree.
def forward(self, x):
    return self.dropout(self.fc2(gelu(self.fc1(x))))

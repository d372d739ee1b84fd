# exercise: feedforward
# kind: faulty
# class: rule
# rule: the order is "fc1 -> self.activation -> fc2 -> self.dropout" (notebook, exercise
#       feedforward); this body applies the dropout to the FFN's input instead of its output.
# shows: FeedForward(Config(10, 6, 4, 2, 2, 8, dropout=0.5)).train() on torch.randn(2, 3, 4) with
#        torch.manual_seed(7) before the call: the output differs from
#        dropout(fc2(gelu(fc1(x)))) under the same seed (the input, not the output, is masked).
def forward(self, x):
    return self.fc2(self.activation(self.fc1(self.dropout(x))))

# exercise: feedforward
# kind: correct
# class: value
# rule: correct: flattens all leading axes into one row axis, runs fc1 -> activation -> fc2 on
#       the [N, d] matrix, restores the leading shape, then applies dropout; same per-position
#       computation in the same order, through the named submodules.
# shows: -
def forward(self, x):
    leading = x.shape[:-1]
    rows = x.reshape(-1, x.shape[-1])
    out = self.fc2(self.activation(self.fc1(rows)))
    return self.dropout(out.reshape(*leading, out.shape[-1]))

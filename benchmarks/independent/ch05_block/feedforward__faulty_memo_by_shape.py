# exercise: feedforward
# kind: faulty
# class: hidden-state
# rule: the FFN is a per-position function of the current input ("computed independently for every
#       position"); this body memoises its result on the module keyed by the input's shape, so a
#       second call with a different input of the same shape returns the first call's output
#       (itself the same tensor object).
# shows: ffn(torch.zeros(1, 2, 4)) then ffn(torch.ones(1, 2, 4)) returns the zeros' output again.
def forward(self, x):
    memo = self.__dict__.setdefault("_out_by_shape", {})
    key = tuple(x.shape)
    if key not in memo:
        memo[key] = self.dropout(self.fc2(self.activation(self.fc1(x))))
    return memo[key]

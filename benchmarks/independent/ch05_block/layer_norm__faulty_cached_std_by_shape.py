# exercise: layer_norm
# kind: faulty
# class: hidden-state
# rule: "statistics are computed for each position separately" from the input at hand (notebook
#       section 2 step 4); this body memoises the standard deviation on the module, keyed by the
#       input's shape, so a later call with a different input of the same shape reuses stale
#       statistics.
# shows: norm = LayerNorm(2); norm(torch.tensor([[1.0, 3.0]])) is right; then
#        norm(torch.tensor([[0.0, 10.0]])) returns (-5, 5) instead of about (-1, 1).
#        (The visible check passes: its second call is x + 7.5, which has the same std.)
def forward(self, x):
    memo = self.__dict__.setdefault("_std_by_shape", {})
    mean = x.mean(dim=-1, keepdim=True)
    centred = x - mean
    key = tuple(x.shape)
    if key not in memo:
        memo[key] = torch.sqrt((centred * centred).mean(dim=-1, keepdim=True) + self.eps)
    return centred / memo[key] * self.weight + self.bias

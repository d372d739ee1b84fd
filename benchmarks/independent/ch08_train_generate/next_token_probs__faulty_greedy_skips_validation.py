# exercise: next_token_probs
# kind: faulty
# class: rule
# rule: "ValueError for temperature < 0 or top_k < 1" (docstring), whatever the temperature.  This
#       body returns the greedy one-hot before it looks at top_k, so temperature 0 with a bad
#       top_k is accepted.
# shows: next_token_probs(torch.tensor([[1., 3., 2.]]), 0.0, top_k=0) returns [[0., 1., 0.]]
#        instead of raising ValueError (top_k=0 with temperature 1.0 does raise).
def next_token_probs(logits, temperature=1.0, top_k=None):
    if temperature < 0:
        raise ValueError(f"temperature must be >= 0, got {temperature}")
    if temperature == 0:
        return F.one_hot(logits.argmax(dim=-1), logits.shape[-1]).to(logits.dtype)
    if top_k is not None and top_k < 1:
        raise ValueError(f"top_k must be >= 1, got {top_k}")
    scaled = logits / temperature
    if top_k is not None and top_k < scaled.shape[-1]:
        kth = torch.topk(scaled, top_k, dim=-1).values[..., -1:]
        scaled = scaled.masked_fill(scaled < kth, float("-inf"))
    return torch.softmax(scaled, dim=-1)

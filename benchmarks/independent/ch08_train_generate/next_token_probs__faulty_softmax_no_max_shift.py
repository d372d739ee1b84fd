# exercise: next_token_probs
# kind: faulty
# class: range
# rule: the result must be probabilities (non-negative, rows summing to 1) for any logits;
#       softmax over the last axis.  This body writes softmax as exp(z) / sum(exp(z)) without
#       subtracting the row maximum, so large logits (or a small temperature) overflow to inf/inf.
# shows: logits = torch.tensor([[100., 90., 0.]]), temperature 0.5: exp(200) overflows float32 and
#        the row becomes [nan, nan, 0] instead of about [1, 2e-9, 0].
def next_token_probs(logits, temperature=1.0, top_k=None):
    if temperature < 0:
        raise ValueError(f"temperature must be >= 0, got {temperature}")
    if top_k is not None and top_k < 1:
        raise ValueError(f"top_k must be >= 1, got {top_k}")
    if temperature == 0:
        return F.one_hot(logits.argmax(dim=-1), logits.shape[-1]).to(logits.dtype)
    scaled = logits / temperature
    if top_k is not None and top_k < scaled.shape[-1]:
        kth = torch.topk(scaled, top_k, dim=-1).values[..., -1:]
        scaled = scaled.masked_fill(scaled < kth, float("-inf"))
    weights = torch.exp(scaled)
    return weights / weights.sum(dim=-1, keepdim=True)

# exercise: next_token_probs
# kind: correct
# class: rule
# rule: correct; finds the k-th largest of the scaled logits with torch.kthvalue (the
#       (V-k+1)-th smallest), masks with torch.where and -inf, and writes the softmax out
#       explicitly (exp of x - max, divided by the row sum); the one-hot is built with scatter
#       in the input's dtype.  Validates both arguments before anything else.
def next_token_probs(logits, temperature=1.0, top_k=None):
    if temperature < 0:
        raise ValueError(f"temperature must be >= 0, got {temperature}")
    if top_k is not None and top_k < 1:
        raise ValueError(f"top_k must be >= 1 (or None), got {top_k}")
    if temperature == 0:
        winner = torch.argmax(logits, dim=-1, keepdim=True)
        return torch.zeros_like(logits).scatter(-1, winner, 1.0)
    scaled = logits / temperature
    vocab = scaled.shape[-1]
    if top_k is not None and top_k < vocab:
        kth = torch.kthvalue(scaled, vocab - top_k + 1, dim=-1, keepdim=True).values
        scaled = torch.where(scaled >= kth, scaled, torch.full_like(scaled, float("-inf")))
    shifted = scaled - scaled.amax(dim=-1, keepdim=True)
    weights = torch.exp(shifted)
    return weights / weights.sum(dim=-1, keepdim=True)

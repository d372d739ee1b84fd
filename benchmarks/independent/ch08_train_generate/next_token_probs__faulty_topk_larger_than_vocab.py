# exercise: next_token_probs
# kind: faulty
# class: rule
# rule: "top_k >= V keeps everything" (docstring and notebook).  This body always calls
#       torch.topk(scaled, top_k), which raises when top_k > V (k out of range).
# shows: next_token_probs(torch.randn(2, 6), 1.0, top_k=10) raises RuntimeError instead of
#        returning the plain softmax (top_k = V = 6 works).
def next_token_probs(logits, temperature=1.0, top_k=None):
    if temperature < 0:
        raise ValueError(f"temperature must be >= 0, got {temperature}")
    if top_k is not None and top_k < 1:
        raise ValueError(f"top_k must be >= 1, got {top_k}")
    if temperature == 0:
        return F.one_hot(logits.argmax(dim=-1), logits.shape[-1]).to(logits.dtype)
    scaled = logits / temperature
    if top_k is not None:
        kth = torch.topk(scaled, top_k, dim=-1).values[..., -1:]
        scaled = scaled.masked_fill(scaled < kth, float("-inf"))
    return torch.softmax(scaled, dim=-1)

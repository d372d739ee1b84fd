# exercise: next_token_probs
# kind: faulty
# class: in-place
# rule: the function maps logits to probabilities; the caller's logits are an input (generate and
#       the notebook reuse them), nothing in the text allows changing them.  This body divides the
#       argument in place (logits /= temperature) and masks it in place.
# shows: logits = torch.tensor([[1., 2., 3., 0.5]]); next_token_probs(logits, 0.5, 2): afterwards
#        the caller's logits are [[-inf, 4., 6., -inf]] (divided by 0.5, then masked).
def next_token_probs(logits, temperature=1.0, top_k=None):
    if temperature < 0:
        raise ValueError(f"temperature must be >= 0, got {temperature}")
    if top_k is not None and top_k < 1:
        raise ValueError(f"top_k must be >= 1, got {top_k}")
    if temperature == 0:
        return F.one_hot(logits.argmax(dim=-1), logits.shape[-1]).to(logits.dtype)
    logits /= temperature
    if top_k is not None and top_k < logits.shape[-1]:
        kth = torch.topk(logits, top_k, dim=-1).values[..., -1:]
        logits.masked_fill_(logits < kth, float("-inf"))
    return torch.softmax(logits, dim=-1)

# exercise: next_token_probs
# kind: faulty
# class: type
# rule: [B, V] probabilities "dtype 与输入相同" (notebook, exercise next_token_probs).  For
#       temperature 0 this body returns F.one_hot's result as it is: an int64 tensor.
# shows: next_token_probs(torch.tensor([[1., 3., 2.]]), 0.0) returns tensor([[0, 1, 0]]) with
#        dtype int64 instead of float32 (torch.multinomial then refuses it).
def next_token_probs(logits, temperature=1.0, top_k=None):
    if temperature < 0:
        raise ValueError(f"temperature must be >= 0, got {temperature}")
    if top_k is not None and top_k < 1:
        raise ValueError(f"top_k must be >= 1, got {top_k}")
    if temperature == 0:
        return F.one_hot(logits.argmax(dim=-1), num_classes=logits.shape[-1])
    scaled = logits / temperature
    if top_k is not None and top_k < scaled.shape[-1]:
        kth = torch.topk(scaled, top_k, dim=-1).values[..., -1:]
        scaled = scaled.masked_fill(scaled < kth, float("-inf"))
    return torch.softmax(scaled, dim=-1)

# exercise: embedding_grad
# kind: faulty
# class: aliasing
# rule: each call must return the gradient of its own batch (a [V, d] result); this body keeps one
#       zeroed buffer per (V, d, dtype, device) in module state and returns that same tensor every time,
#       so a later call overwrites a gradient the caller already holds.
# shows: g1 = embedding_grad(tensor([[0]]), ones(1,1,2), 3); g2 = embedding_grad(tensor([[1]]), ones(1,1,2), 3)
#        -> g1 now equals g2 (row 0 is zero, row 1 is one) and g1 is g2.
def embedding_grad(ids, upstream, vocab_size):
    width = upstream.shape[-1]
    buffers = globals().setdefault("_embedding_grad_buffers", {})
    key = (vocab_size, width, upstream.dtype, upstream.device)
    if key not in buffers:
        buffers[key] = torch.zeros(vocab_size, width, dtype=upstream.dtype, device=upstream.device)
    grad = buffers[key]
    grad.zero_()
    grad.index_add_(0, ids.reshape(-1).long().to(upstream.device), upstream.reshape(-1, width))
    return grad

# exercise: embedding_grad
# kind: faulty
# class: hidden-state
# rule: the result is the gradient for the given ids/upstream only ("row i is the sum of the upstream rows
#       at the positions that read id i; a row no position read is zero"); this body accumulates into a
#       module-level buffer like .grad does and never clears it, so every call adds the previous calls'
#       gradients.
# shows: calling embedding_grad(tensor([[0]]), ones(1,1,2), 3) twice -> the second result has row 0 equal
#        to [2, 2] instead of [1, 1].
def embedding_grad(ids, upstream, vocab_size):
    width = upstream.shape[-1]
    store = globals().setdefault("_embedding_grad_accumulator", {})
    key = (vocab_size, width, upstream.dtype, upstream.device)
    if key not in store:
        store[key] = torch.zeros(vocab_size, width, dtype=upstream.dtype, device=upstream.device)
    store[key].index_add_(0, ids.reshape(-1).long().to(upstream.device), upstream.reshape(-1, width))
    return store[key].clone()

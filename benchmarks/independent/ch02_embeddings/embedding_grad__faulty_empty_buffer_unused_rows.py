# exercise: embedding_grad
# kind: faulty
# class: value
# rule: "没被读到的行恰好为 0" (docstring: "a row no position read is zero"); this body starts from
#       torch.empty instead of torch.zeros and only writes the rows that were read, so unused rows hold
#       whatever was in the allocated memory.
# shows: after freeing a large tensor of 7.0s, embedding_grad(tensor([[0]]), ones(1, 1, 64), 512) can
#        return rows 1..511 full of 7.0 (uninitialised memory) instead of zeros.
def embedding_grad(ids, upstream, vocab_size):
    width = upstream.shape[-1]
    flat = ids.reshape(-1).long()
    grads = upstream.reshape(-1, width)
    result = torch.empty(vocab_size, width, dtype=upstream.dtype, device=upstream.device)
    for value in torch.unique(flat).tolist():
        result[value] = grads[flat == value].sum(dim=0)
    return result

# exercise: embedding_grad
# kind: correct
# class: value
# rule: loops over the distinct ids (torch.unique) and writes each row as the sum over the positions
#       that read it (boolean mask), into upstream.new_zeros so unused rows stay exactly 0 and the
#       dtype/device follow upstream.
# shows: n/a (correct body)
def embedding_grad(ids, upstream, vocab_size):
    width = upstream.shape[-1]
    flat_ids = ids.reshape(-1).to(upstream.device)
    grads = upstream.reshape(-1, width)
    result = upstream.new_zeros(vocab_size, width)
    for value in torch.unique(flat_ids).tolist():
        mask = flat_ids == value
        result[int(value)] = grads[mask].sum(dim=0)
    return result

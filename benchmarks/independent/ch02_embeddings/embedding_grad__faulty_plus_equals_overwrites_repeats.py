# exercise: embedding_grad
# kind: faulty
# class: value
# rule: "一个 id 被几个位置读到，就把这几个位置的上游梯度加起来...不是后一次覆盖前一次"; this body uses
#       grad[ids] += upstream, an index_put without accumulation, so a repeated id keeps only one of its
#       upstream rows.
# shows: ids = tensor([[2, 2]]), upstream = ones(1, 2, 3), V = 4 -> row 2 is [1, 1, 1] instead of [2, 2, 2].
def embedding_grad(ids, upstream, vocab_size):
    width = upstream.shape[-1]
    grad = upstream.new_zeros(vocab_size, width)
    grad[ids.reshape(-1).long()] += upstream.reshape(-1, width)
    return grad

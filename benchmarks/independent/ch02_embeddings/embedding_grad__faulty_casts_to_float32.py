# exercise: embedding_grad
# kind: faulty
# class: type
# rule: the notebook: "返回表的梯度，形状 [V,d]，dtype 与 upstream 相同"; this body allocates a default
#       (float32) buffer and casts upstream with .float() to make index_add_ accept it, so float64 or
#       float16 upstream gives a float32 gradient.
# shows: embedding_grad(tensor([[0, 1]]), torch.ones(1, 2, 3, dtype=torch.float64), 3).dtype is
#        torch.float32, not torch.float64.
def embedding_grad(ids, upstream, vocab_size):
    width = upstream.shape[-1]
    grad = torch.zeros(vocab_size, width, device=upstream.device)
    grad.index_add_(0, ids.reshape(-1).long(), upstream.reshape(-1, width).float())
    return grad

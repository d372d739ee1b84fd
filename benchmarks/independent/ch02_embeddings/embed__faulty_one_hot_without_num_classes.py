# exercise: embed
# kind: faulty
# class: value
# rule: the lookup must work for every id in [0, V) ("[B,T] 的 ids 和 [V,d] 的表，返回 [B,T,d]"); this
#       body multiplies F.one_hot(ids) by the table without num_classes, so the one-hot width is
#       max(ids) + 1, not V, and the product fails whenever the largest id in the batch is below V - 1.
# shows: embed(torch.tensor([[0, 2]]), torch.randn(5, 3)) raises a matmul shape RuntimeError instead of
#        returning the rows 0 and 2.
def embed(ids, weight):
    vocab = weight.shape[0]
    if bool(((ids.long() < 0) | (ids.long() >= vocab)).any()):
        raise ValueError("id outside [0, V)")
    rows = torch.nn.functional.one_hot(ids.long()).to(weight.dtype)
    return rows @ weight

# exercise: one_hot
# kind: faulty
# class: in-place
# rule: one_hot maps ids to new rows and must leave the caller's ids alone; this body calls unsqueeze_
#       on ids.long(), which is the caller's own tensor when ids are already int64, so the caller's ids
#       gain a trailing axis of length 1.
# shows: ids = torch.tensor([[2, 0], [1, 3]]); one_hot(ids, 4) -> afterwards ids.shape is [2, 2, 1].
def one_hot(ids, vocab_size, dtype=torch.float32):
    if not isinstance(ids, torch.Tensor) or ids.dtype == torch.bool or ids.is_floating_point() or ids.is_complex():
        raise TypeError("ids must be an integer tensor")
    if bool(((ids.long() < 0) | (ids.long() >= vocab_size)).any()):
        raise ValueError("id outside [0, vocab_size)")
    shape = tuple(ids.shape) + (vocab_size,)
    index = ids.long()
    index.unsqueeze_(-1)
    out = torch.zeros(shape, dtype=dtype, device=ids.device)
    out.scatter_(-1, index, 1)
    return out

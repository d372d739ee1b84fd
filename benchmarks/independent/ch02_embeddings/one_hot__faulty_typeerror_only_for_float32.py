# exercise: one_hot
# kind: faulty
# class: type
# rule: "ids 不是整数张量（例如浮点张量）时抛出 TypeError" / docstring "TypeError for ids that are not
#       integers"; this body only refuses torch.float32 ids, so float64/float16 ids are silently
#       truncated by .long() (the check's message: float ids must not be silently truncated).
# shows: one_hot(torch.tensor([0.7, 2.0], dtype=torch.float64), 4) returns rows for ids [0, 2] instead of
#        raising TypeError.
def one_hot(ids, vocab_size, dtype=torch.float32):
    if ids.dtype == torch.float32:
        raise TypeError("ids must be integers, not floats")
    if bool(((ids.long() < 0) | (ids.long() >= vocab_size)).any()):
        raise ValueError("id outside [0, vocab_size)")
    index = ids.long().unsqueeze(-1)
    out = torch.zeros(*ids.shape, vocab_size, dtype=dtype, device=ids.device)
    return out.scatter_(-1, index, 1)

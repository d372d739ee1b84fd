# exercise: one_hot
# kind: faulty
# class: value
# rule: "任意形状 [...] 的整数 ids，返回形状 [..., V]" (docstring "[...] integer ids -> [..., vocab_size]");
#       this body assumes [B, T] ids and reshapes to (ids.shape[0], -1, V), which is right only for 2-D ids.
# shows: one_hot(torch.tensor([3, 1, 2]), 4) has shape [3, 1, 4] instead of [3, 4]; 3-D ids [2, 2, 2]
#        give [2, 4, 4] instead of [2, 2, 2, 4].
def one_hot(ids, vocab_size, dtype=torch.float32):
    if not isinstance(ids, torch.Tensor) or ids.dtype == torch.bool or ids.is_floating_point() or ids.is_complex():
        raise TypeError("ids must be an integer tensor")
    if bool(((ids.long() < 0) | (ids.long() >= vocab_size)).any()):
        raise ValueError("id outside [0, vocab_size)")
    batch = ids.reshape(ids.shape[0], -1).long()
    rows = torch.nn.functional.one_hot(batch, vocab_size).to(dtype)
    return rows

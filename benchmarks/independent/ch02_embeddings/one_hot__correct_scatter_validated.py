# exercise: one_hot
# kind: correct
# class: value
# rule: instead of F.one_hot(...).to(dtype), writes the 1s with Tensor.scatter_ into a zero tensor of
#       the requested dtype on the ids' device; validates the dtype (only integer tensors; floats, bool,
#       complex and non-tensors -> TypeError) and the range with elementwise masks in int64 (empty ids
#       are fine; uint8/int8 ids with V > 255 are compared correctly).
# shows: n/a (correct body)
def one_hot(ids, vocab_size, dtype=torch.float32):
    if not isinstance(ids, torch.Tensor):
        raise TypeError(f"ids must be an integer tensor, got {type(ids).__name__}")
    if ids.dtype == torch.bool or ids.is_floating_point() or ids.is_complex():
        raise TypeError(f"ids must be an integer tensor, got dtype {ids.dtype}")
    wide = ids.to(torch.int64)  # compare in int64: a small int dtype would wrap vocab_size
    outside = (wide < 0) | (wide >= vocab_size)
    if bool(outside.any()):
        raise ValueError(f"every id must lie in [0, {vocab_size})")
    out = torch.zeros(tuple(ids.shape) + (vocab_size,), dtype=dtype, device=ids.device)
    out.scatter_(-1, wide.unsqueeze(-1), 1)
    return out

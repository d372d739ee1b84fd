# exercise: one_hot
# kind: faulty
# class: value
# rule: "任意形状 [...] 的整数 ids ... 有 id 小于 0 或不小于 vocab_size 时抛出 ValueError" (any integer ids;
#       the visible check itself passes int32 ids); this body compares the ids with vocab_size in the ids'
#       own dtype, where torch wraps the Python int to that dtype, so for uint8/int8/int16 ids with a
#       vocabulary larger than the dtype's range valid ids are refused (or invalid ones let through).
# shows: one_hot(torch.tensor([50], dtype=torch.uint8), 300) raises ValueError (300 wraps to 44 in
#        uint8) instead of returning a [1, 300] row with a 1 in column 50.
def one_hot(ids, vocab_size, dtype=torch.float32):
    if not isinstance(ids, torch.Tensor) or ids.dtype == torch.bool or ids.is_floating_point() or ids.is_complex():
        raise TypeError("ids must be an integer tensor")
    if bool((ids < 0).any()) or bool((ids >= vocab_size).any()):
        raise ValueError("id outside [0, vocab_size)")
    out = torch.zeros(*ids.shape, vocab_size, dtype=dtype, device=ids.device)
    out.scatter_(-1, ids.long().unsqueeze(-1), 1)
    return out

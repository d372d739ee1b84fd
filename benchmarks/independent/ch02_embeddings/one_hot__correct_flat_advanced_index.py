# exercise: one_hot
# kind: correct
# class: value
# rule: flattens the ids to N positions, sets out[n, ids[n]] = 1 with an advanced-index assignment on an
#       [N, V] zero matrix, then reshapes to ids.shape + (V,); range checked with min/max (guarded for
#       empty ids); dtype checked by listing the integer dtypes explicitly.
# shows: n/a (correct body)
def one_hot(ids, vocab_size, dtype=torch.float32):
    integer_dtypes = (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)
    if not isinstance(ids, torch.Tensor) or ids.dtype not in integer_dtypes:
        raise TypeError("one_hot needs an integer tensor of ids")
    flat = ids.reshape(-1).to(torch.int64)
    if flat.numel() > 0:
        low, high = int(flat.min()), int(flat.max())
        if low < 0 or high >= vocab_size:
            raise ValueError(f"ids must lie in [0, {vocab_size}), got values from {low} to {high}")
    n = flat.numel()
    table = torch.zeros(n, vocab_size, dtype=dtype, device=ids.device)
    table[torch.arange(n, device=ids.device), flat] = 1
    return table.reshape(*ids.shape, vocab_size)

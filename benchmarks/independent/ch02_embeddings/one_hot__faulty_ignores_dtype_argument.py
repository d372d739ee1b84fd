# exercise: one_hot
# kind: faulty
# class: type
# rule: the result's dtype must be the argument `dtype` (notebook: "dtype 为参数 dtype（默认 float32）");
#       this body always casts with .float(), so only the default is honoured.
# shows: one_hot(torch.tensor([1, 0]), 3, dtype=torch.float64) returns float32 instead of float64
#        (and dtype=torch.float16 also gives float32).
def one_hot(ids, vocab_size, dtype=torch.float32):
    if not isinstance(ids, torch.Tensor) or ids.dtype == torch.bool or ids.is_floating_point() or ids.is_complex():
        raise TypeError("ids must be an integer tensor")
    if bool(((ids.long() < 0) | (ids.long() >= vocab_size)).any()):
        raise ValueError("id outside [0, vocab_size)")
    return torch.nn.functional.one_hot(ids.long(), vocab_size).float()

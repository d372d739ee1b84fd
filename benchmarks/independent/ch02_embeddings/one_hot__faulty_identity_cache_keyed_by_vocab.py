# exercise: one_hot
# kind: faulty
# class: hidden-state
# rule: the result must have dtype `dtype` on every call; this body caches the identity matrix in a
#       module-level dict keyed by vocab_size alone, so a later call with another dtype reuses the first
#       call's identity and returns the first call's dtype.
# shows: one_hot(torch.tensor([1]), 4) then one_hot(torch.tensor([1]), 4, dtype=torch.float64) -> the
#        second result is float32, not float64.
def one_hot(ids, vocab_size, dtype=torch.float32):
    if not isinstance(ids, torch.Tensor) or ids.dtype == torch.bool or ids.is_floating_point() or ids.is_complex():
        raise TypeError("ids must be an integer tensor")
    if bool(((ids.long() < 0) | (ids.long() >= vocab_size)).any()):
        raise ValueError("id outside [0, vocab_size)")
    cache = globals().setdefault("_one_hot_identity_cache", {})
    if vocab_size not in cache:
        cache[vocab_size] = torch.eye(vocab_size, dtype=dtype, device=ids.device)
    return cache[vocab_size][ids.long()]

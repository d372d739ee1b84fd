# exercise: get_batch
# kind: faulty
# class: hidden-state
# rule: row b of x must be data[s : s + block_size] of the `data` passed in (docstring).  This body
#       caches the unfolded windows in a module-level dict keyed by (len(data), block_size), so a
#       second call with a different stream of the same length slices the first stream's windows.
# shows: get_batch(torch.arange(31), 6, 4, g) then get_batch(torch.arange(100, 131), 6, 4, g):
#        the second batch contains ids 0..30, not 100..130.
def get_batch(data, block_size, batch_size, generator=None):
    cache = globals().setdefault("_get_batch_windows", {})
    key = (len(data), block_size)
    if key not in cache:
        cache[key] = data.unfold(0, block_size + 1, 1)
    windows = cache[key]
    starts = torch.randint(len(data) - block_size, (batch_size,), generator=generator)
    rows = windows[starts.to(windows.device)]
    return rows[:, :-1].clone(), rows[:, 1:].clone()

# exercise: get_batch
# kind: faulty
# class: rule
# rule: "one draw per row, in that order; row b of x is data[s : s + block_size] ... for
#       s = starts[b]" (docstring).  This body sorts the starts first (to read memory in order),
#       so row b no longer belongs to starts[b].
# shows: data = torch.arange(100, 131), block_size 6, batch_size 4, generator seeded 1: the rows
#        are the right windows but in ascending order of start, not in draw order.
def get_batch(data, block_size, batch_size, generator=None):
    starts = torch.randint(len(data) - block_size, (batch_size,), generator=generator)
    starts, _ = torch.sort(starts)
    offsets = torch.arange(block_size)
    grid = (starts[:, None] + offsets[None, :]).to(data.device)
    return data[grid], data[grid + 1]

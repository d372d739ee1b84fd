# exercise: get_batch
# kind: correct
# class: value
# rule: correct; instead of slicing/stacking one window per start, it builds every (T+1)-long
#       window with Tensor.unfold, gathers the drawn rows with advanced indexing (a copy), and
#       splits each row into x (first T ids) and y (last T ids); copies keep x and y independent.
def get_batch(data, block_size, batch_size, generator=None):
    starts = torch.randint(len(data) - block_size, (batch_size,), generator=generator)
    windows = data.unfold(0, block_size + 1, 1)  # [len - T, T + 1], a view of data
    rows = windows[starts.to(data.device)]  # advanced indexing: a new tensor on data's device
    x = rows[:, :block_size].clone()
    y = rows[:, 1:].clone()
    return x, y

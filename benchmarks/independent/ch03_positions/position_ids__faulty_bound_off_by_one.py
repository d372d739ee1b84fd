# exercise: position_ids
# kind: faulty
# class: value
# rule: notebook "start + length > block_size 时抛出 ValueError；恰好相等时不报错"; this raises already
#       when start + length == block_size (the last row C-1 exists and may be used).
# shows: position_ids(2, 6, start=4) raises ValueError instead of returning [4, 5].
def position_ids(length, block_size, start=0):
    if start < 0 or length < 0:
        raise ValueError("start and length must not be negative")
    if start + length >= block_size:
        raise ValueError(f"start + length = {start + length} does not fit block_size = {block_size}")
    return torch.arange(start, start + length, dtype=torch.int64)

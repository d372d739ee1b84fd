# exercise: position_ids
# kind: faulty
# class: type
# rule: the result is "an int64 tensor" for every allowed call (docstring; notebook: "一个 torch.int64 的
#       一维张量"); torch.tensor(list) infers the dtype, and an empty list infers float32.
# shows: position_ids(0, 5, start=2) returns tensor([], dtype=torch.float32) instead of an empty int64 tensor.
def position_ids(length, block_size, start=0):
    if start < 0 or length < 0:
        raise ValueError("start and length must not be negative")
    if start + length > block_size:
        raise ValueError(f"start + length = {start + length} > block_size = {block_size}")
    return torch.tensor(list(range(start, start + length)))

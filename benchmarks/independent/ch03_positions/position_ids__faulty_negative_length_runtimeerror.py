# exercise: position_ids
# kind: faulty
# class: type
# rule: docstring "ValueError ... when start or length is negative"; only start is checked, so a
#       negative length reaches torch.arange and PyTorch's own RuntimeError comes out instead.
# shows: position_ids(-2, 8, start=3) raises RuntimeError (arange bound/step inconsistent), not ValueError.
def position_ids(length, block_size, start=0):
    if start < 0:
        raise ValueError(f"start must not be negative, got {start}")
    if start + length > block_size:
        raise ValueError(f"start + length = {start + length} > block_size = {block_size}")
    return torch.arange(start, start + length, dtype=torch.int64)

# exercise: position_ids
# kind: faulty
# class: aliasing
# rule: every call must return a new tensor (visible check: "return a new tensor from every call"); this
#       keeps one arange(block_size) per block_size and returns a slice (a view) of it, so a caller who
#       edits its ids edits every later call's ids.
# shows: ids = position_ids(3, 5); ids += 100; position_ids(3, 5) now gives [100, 101, 102].
def position_ids(length, block_size, start=0):
    if start < 0 or length < 0:
        raise ValueError("start and length must not be negative")
    if start + length > block_size:
        raise ValueError(f"start + length = {start + length} > block_size = {block_size}")
    tables = globals().setdefault("_position_tables", {})
    if block_size not in tables:
        tables[block_size] = torch.arange(block_size, dtype=torch.int64)
    return tables[block_size][start:start + length]

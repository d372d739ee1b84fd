# exercise: position_ids
# kind: correct
# class: type
# rule: builds the ids in Python (a range) and converts with an explicit dtype=torch.int64, so even
#       an empty range (length 0) gives an int64 tensor; one combined validity test.
def position_ids(length, block_size, start=0):
    if not (start >= 0 and length >= 0 and start + length <= block_size):
        raise ValueError(
            f"cannot place {length} tokens after {start} cached ones in a table of {block_size} rows")
    return torch.tensor([p for p in range(start, start + length)], dtype=torch.int64)

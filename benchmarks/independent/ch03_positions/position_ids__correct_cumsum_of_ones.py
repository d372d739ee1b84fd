# exercise: position_ids
# kind: correct
# class: value
# rule: builds the ids as a running sum of ones (cumsum) shifted by start-1 instead of torch.arange;
#       validates each condition separately before building anything; int64 throughout.
def position_ids(length, block_size, start=0):
    if start < 0:
        raise ValueError(f"start must not be negative, got {start}")
    if length < 0:
        raise ValueError(f"length must not be negative, got {length}")
    last_needed = start + length  # rows start .. start+length-1 must all exist
    if last_needed > block_size:
        raise ValueError(f"positions up to {last_needed - 1} need more than block_size={block_size} rows")
    ones = torch.ones(length, dtype=torch.int64)
    return torch.cumsum(ones, dim=0) + (start - 1)

# exercise: position_ids
# kind: faulty
# class: hidden-state
# rule: the ids must be "start, ..., start + length - 1" for THIS call's start (docstring); a memo kept
#       between calls, keyed by (length, block_size) only, hands back the ids of an earlier call's start.
# shows: position_ids(2, 6) -> [0, 1]; then position_ids(2, 6, start=4) returns [0, 1] instead of [4, 5].
def position_ids(length, block_size, start=0):
    if start < 0 or length < 0:
        raise ValueError("start and length must not be negative")
    if start + length > block_size:
        raise ValueError(f"start + length = {start + length} > block_size = {block_size}")
    memo = globals().setdefault("_position_ids_memo", {})
    key = (length, block_size)
    if key not in memo:
        memo[key] = torch.arange(start, start + length, dtype=torch.int64)
    return memo[key].clone()

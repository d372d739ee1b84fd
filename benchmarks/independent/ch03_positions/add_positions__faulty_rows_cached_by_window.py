# exercise: add_positions
# kind: faulty
# class: hidden-state
# rule: the rows added are rows start..start+T-1 "of the [C, d] position table" passed in THIS call; a
#       memo keyed by (start, T) keeps the rows of the first table seen, so a second table (or the same
#       parameter after an optimizer step) is ignored.
# shows: add_positions(x, torch.zeros(5, 4)) then add_positions(x, torch.ones(5, 4)) returns x + 0 again
#        instead of x + 1.
def add_positions(token_vectors, table, start=0):
    steps = token_vectors.shape[1]
    if start < 0 or start + steps > table.shape[0]:
        raise ValueError(f"start + T = {start + steps} > C = {table.shape[0]}")
    memo = globals().setdefault("_position_rows_memo", {})
    key = (start, steps)
    if key not in memo:
        memo[key] = table[start:start + steps]
    return token_vectors + memo[key]

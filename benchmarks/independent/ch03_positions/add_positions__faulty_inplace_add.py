# exercise: add_positions
# kind: faulty
# class: in-place
# rule: the result is "[B, T, d] token vectors plus rows ..." (docstring), a new tensor; `+=` on the
#       argument overwrites the caller's token vectors (and fails on a leaf that requires grad).
# shows: x = torch.zeros(1, 2, 3); add_positions(x, torch.ones(4, 3)) leaves x all ones, not zeros.
def add_positions(token_vectors, table, start=0):
    steps = token_vectors.shape[1]
    if start < 0 or start + steps > table.shape[0]:
        raise ValueError(f"start + T = {start + steps} > C = {table.shape[0]}")
    token_vectors += table[start:start + steps]
    return token_vectors

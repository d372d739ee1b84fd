# exercise: add_positions
# kind: faulty
# class: type
# rule: notebook section 1 "向量是 float32" and the result is the token vectors plus rows (same dtype);
#       doing the sum in float64 "for accuracy" returns float64 for float32 inputs.
# shows: add_positions(torch.randn(2, 3, 4), torch.randn(5, 4)).dtype is torch.float64, not torch.float32.
def add_positions(token_vectors, table, start=0):
    steps = token_vectors.shape[1]
    if start < 0 or start + steps > table.shape[0]:
        raise ValueError(f"start + T = {start + steps} > C = {table.shape[0]}")
    return token_vectors.double() + table[start:start + steps].double()

# exercise: add_positions
# kind: faulty
# class: value
# rule: docstring/notebook "ValueError when start + T > C ... 不要让切片悄悄变短"; checking only T > C
#       forgets the cached tokens, so with T = 1 a start past the table slices an empty row block that
#       broadcasts silently, and with T > 1 PyTorch's own RuntimeError comes out.
# shows: add_positions(torch.randn(2, 1, 4), torch.randn(5, 4), start=5) returns an empty [2, 0, 4] tensor
#        instead of raising ValueError.
def add_positions(token_vectors, table, start=0):
    steps = token_vectors.shape[1]
    if steps > table.shape[0]:
        raise ValueError(f"T = {steps} > C = {table.shape[0]}")
    return token_vectors + table[start:start + steps]

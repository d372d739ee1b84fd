# exercise: add_positions
# kind: correct
# class: value
# rule: gathers the rows with index_select on int64 ids built on the table's device (not a slice), makes
#       the batch axis explicit with unsqueeze(0)/expand, and checks the bound before touching the table.
def add_positions(token_vectors, table, start=0):
    steps = token_vectors.shape[1]
    rows_available = table.shape[0]
    if start < 0 or start + steps > rows_available:
        raise ValueError(
            f"positions {start}..{start + steps - 1} need rows the [{rows_available}, d] position table lacks")
    ids = torch.arange(start, start + steps, dtype=torch.int64, device=table.device)
    rows = torch.index_select(table, 0, ids)                      # [T, d]
    return token_vectors + rows.unsqueeze(0).expand(token_vectors.shape[0], -1, -1)

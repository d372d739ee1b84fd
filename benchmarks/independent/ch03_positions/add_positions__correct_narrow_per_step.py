# exercise: add_positions
# kind: correct
# class: value
# rule: uses table.narrow for the rows and adds them one time step at a time (a loop over t), stacking
#       along the time axis; keeps the graph to both inputs and never edits either input.
def add_positions(token_vectors, table, start=0):
    batch, steps, width = token_vectors.shape
    if start < 0:
        raise ValueError(f"start must not be negative, got {start}")
    if start + steps > table.shape[0]:
        raise ValueError(f"start + T = {start + steps} > C = {table.shape[0]} rows of the position table")
    rows = table.narrow(0, start, steps)                           # [T, d]
    if steps == 0:
        return token_vectors + rows                                # empty [B, 0, d], a new tensor
    per_step = [token_vectors[:, t, :] + rows[t] for t in range(steps)]   # each [B, d]
    return torch.stack(per_step, dim=1)

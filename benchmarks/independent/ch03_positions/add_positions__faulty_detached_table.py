# exercise: add_positions
# kind: faulty
# class: gradient
# rule: the table is the model's learned parameter (notebook: "和词嵌入一样随训练更新"; section 7: a row
#       read by a sequence gets a gradient); detaching the rows leaves the right values but cuts the table
#       out of the graph.
# shows: x = torch.randn(2, 3, 4, requires_grad=True); table = torch.randn(5, 4, requires_grad=True);
#        add_positions(x, table).sum().backward() gives x.grad but leaves table.grad None (should be 2 in
#        rows 0..2, 0 in rows 3..4).
def add_positions(token_vectors, table, start=0):
    steps = token_vectors.shape[1]
    if start < 0 or start + steps > table.shape[0]:
        raise ValueError(f"start + T = {start + steps} > C = {table.shape[0]}")
    rows = table[start:start + steps].detach()
    return token_vectors + rows

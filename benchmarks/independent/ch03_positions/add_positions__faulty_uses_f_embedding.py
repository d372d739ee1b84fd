# exercise: add_positions
# kind: faulty
# class: rule
# rule: notebook exercise add_positions: "请用切片或索引直接取：不要调用 torch.nn.functional.embedding ...
#       （不论直接调用、换个名字导入还是用 getattr）这一题就记 0 分"; values are right but the forbidden
#       lookup is used.
# shows: any call, e.g. add_positions(torch.randn(2, 3, 4), torch.randn(5, 4)), calls F.embedding.
def add_positions(token_vectors, table, start=0):
    import torch.nn.functional as lookup
    steps = token_vectors.shape[1]
    if start < 0 or start + steps > table.shape[0]:
        raise ValueError(f"start + T = {start + steps} > C = {table.shape[0]}")
    ids = torch.arange(start, start + steps, device=table.device)
    return token_vectors + lookup.embedding(ids, table)

# exercise: embed
# kind: faulty
# class: gradient
# rule: "查表的结果要留在计算图里...梯度才能流回表"; this body detaches the lookup and then marks it
#       requires_grad again, so the result looks differentiable but is a new leaf: no gradient ever
#       reaches the table.
# shows: w = torch.randn(5, 3, requires_grad=True); embed(torch.tensor([[1, 2]]), w).sum().backward()
#        leaves w.grad as None (should have ones in rows 1 and 2).
def embed(ids, weight):
    vocab = weight.shape[0]
    if bool(((ids.long() < 0) | (ids.long() >= vocab)).any()):
        raise ValueError("id outside [0, V)")
    out = weight[ids.long()].detach()
    if weight.requires_grad:
        out.requires_grad_(True)
    return out

# exercise: embed
# kind: faulty
# class: rule
# rule: "id 小于 0 或不小于 V 时抛出 ValueError：Python 的负索引会让 weight[-1] 悄悄读到最后一行，这正是
#       要拦住的情况"; this body only checks the upper bound, so negative ids silently read rows from
#       the end of the table.
# shows: embed(torch.tensor([[-1, 0]]), w) returns [w[V-1], w[0]] instead of raising ValueError.
def embed(ids, weight):
    if bool((ids.long() >= weight.shape[0]).any()):
        raise ValueError("id outside the table")
    return weight[ids.long()]

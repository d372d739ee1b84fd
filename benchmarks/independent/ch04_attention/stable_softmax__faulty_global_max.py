# exercise: stable_softmax
# kind: faulty
# class: range
# rule: notebook section 4: "要减的是每一行自己的最大值：减去整个张量的最大值时 ... 仍会整行下溢成 0/0";
#       this body subtracts the maximum of the whole tensor
# shows: stable_softmax(torch.tensor([[0.0, 1.0], [-200.0, -199.0]])) gives a NaN second row
#        instead of [0.2689, 0.7311]
def stable_softmax(scores):
    e = torch.exp(scores - scores.max())
    return e / e.sum(dim=-1, keepdim=True)

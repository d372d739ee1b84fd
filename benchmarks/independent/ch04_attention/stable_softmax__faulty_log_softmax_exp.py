# exercise: stable_softmax
# kind: faulty
# class: rule
# rule: notebook, exercise stable_softmax: "不要调用 torch.softmax ... 也不要用 log_softmax 再取 exp ...
#       这一题就记 0 分"; the values are right but the forbidden call is made
# shows: any input, e.g. stable_softmax(torch.randn(2, 3)): correct numbers, but log_softmax is called
def stable_softmax(scores):
    return torch.log_softmax(scores, dim=-1).exp()

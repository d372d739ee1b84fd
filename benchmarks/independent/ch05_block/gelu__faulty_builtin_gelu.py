# exercise: gelu
# kind: faulty
# class: rule
# rule: "do not call torch.nn.functional.gelu or nn.GELU: the grader sees such calls and this
#       exercise scores 0" (notebook, exercise gelu). This body calls F.gelu under another name
#       (values are exactly right).
# shows: any input, e.g. torch.tensor([-1.0, 0.5]): right values, forbidden built-in call.
def gelu(x):
    from torch.nn.functional import gelu as exact_builtin
    return exact_builtin(x, approximate="none")

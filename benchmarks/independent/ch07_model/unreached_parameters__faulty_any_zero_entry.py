# exercise: unreached_parameters
# kind: faulty
# class: rule
# rule: only a gradient that is zero in EVERY entry counts (docstring "every entry of their
#       gradient is zero"; notebook: "嵌入表里这一批没读到的行梯度为 0 是正常的，只有整个梯度都为 0
#       才算"). This body flags a parameter as soon as any entry of its gradient is 0.
# shows: a TransformerLM after one backward on a batch that does not read every vocabulary id:
#        token_embedding.weight is listed (its unread rows are 0) though the batch reached it,
#        and position_embedding.weight too when T < block_size;
#        the visible check's sound toy (row 4 unread) catches it too.
def unreached_parameters(model):
    names = []
    for name, parameter in model.named_parameters():
        if not parameter.requires_grad:
            continue
        if parameter.grad is None or bool((parameter.grad == 0).any()):
            names.append(name)
    return names

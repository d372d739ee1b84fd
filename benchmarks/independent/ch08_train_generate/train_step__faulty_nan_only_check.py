# exercise: train_step
# kind: faulty
# class: range
# rule: "if it is not finite, raise FloatingPointError" (docstring; notebook "若是 nan 或 inf").
#       This body only tests math.isnan, so an infinite loss goes on to backward and step.
# shows: a model whose loss is +inf (e.g. a stand-in module returning loss = w.sum() * inf, or
#        logits so large that cross entropy overflows to inf): no error is raised, backward writes
#        nan/inf gradients and optimizer.step() changes the parameters.
def train_step(model, optimizer, inputs, targets, lr, max_grad_norm=1.0):
    for group in optimizer.param_groups:
        group["lr"] = lr
    optimizer.zero_grad(set_to_none=True)
    loss = model(inputs, targets).loss
    value = loss.item()
    if math.isnan(value):
        raise FloatingPointError(f"损失是 nan：{value} (the loss is nan: {value})")
    loss.backward()
    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()
    return value, grad_norm.item()

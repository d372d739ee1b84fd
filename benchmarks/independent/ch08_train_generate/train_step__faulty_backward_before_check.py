# exercise: train_step
# kind: faulty
# class: rule
# rule: a non-finite loss must raise FloatingPointError "before any backward pass or step"
#       (docstring; notebook step 4 "在反向和更新之前").  This body runs backward first and checks
#       afterwards: no parameter moves, but nan gradients are already written into every .grad.
# shows: the tiny LM with head.weight[0, 0] = nan: FloatingPointError is raised and parameters are
#        unchanged, but afterwards p.grad is a nan tensor for the parameters instead of None
#        (zero_grad(set_to_none=True) left them None and no backward should have run).
def train_step(model, optimizer, inputs, targets, lr, max_grad_norm=1.0):
    for group in optimizer.param_groups:
        group["lr"] = lr
    optimizer.zero_grad(set_to_none=True)
    loss = model(inputs, targets).loss
    loss.backward()
    value = loss.item()
    if not math.isfinite(value):
        raise FloatingPointError(f"损失不是有限数：{value} (the loss is not finite: {value})")
    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()
    return value, grad_norm.item()

# exercise: train_step
# kind: faulty
# class: rule
# rule: clipping is ONE clip_grad_norm_(model.parameters(), max_grad_norm) over all gradients as a
#       single vector (docstring; notebook step 6 and its per-tensor counter-example).  This body
#       clips each parameter's gradient separately (it still reports the true total norm), which
#       changes the direction of the update.
# shows: tiny LM, max_grad_norm = 0.05, SGD(lr=1): parameters after the step differ from those of
#        one global clip (e.g. head.weight moves by a different multiple of its gradient); the
#        returned grad_norm is still right (up to float rounding).
def train_step(model, optimizer, inputs, targets, lr, max_grad_norm=1.0):
    for group in optimizer.param_groups:
        group["lr"] = lr
    optimizer.zero_grad(set_to_none=True)
    loss = model(inputs, targets).loss
    value = loss.item()
    if not math.isfinite(value):
        raise FloatingPointError(f"损失不是有限数：{value} (the loss is not finite: {value})")
    loss.backward()
    squares = 0.0
    for parameter in model.parameters():
        if parameter.grad is not None:
            squares += float(parameter.grad.detach().pow(2).sum())
            torch.nn.utils.clip_grad_norm_([parameter], max_grad_norm)
    optimizer.step()
    return value, math.sqrt(squares)

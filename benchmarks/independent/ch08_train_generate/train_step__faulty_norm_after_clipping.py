# exercise: train_step
# kind: faulty
# class: value
# rule: grad_norm is what clip_grad_norm_ returns, "the total norm before clipping" (docstring,
#       notebook step 6).  This body clips, then measures the total norm of the clipped gradients
#       and returns that, i.e. min(norm, max_grad_norm) roughly.
# shows: tiny LM right after init, max_grad_norm = 0.01: the true pre-clip norm is about 0.9, the
#        body returns about 0.01 (the clipped norm); parameters are updated correctly.
def train_step(model, optimizer, inputs, targets, lr, max_grad_norm=1.0):
    for group in optimizer.param_groups:
        group["lr"] = lr
    optimizer.zero_grad(set_to_none=True)
    loss = model(inputs, targets).loss
    value = loss.item()
    if not math.isfinite(value):
        raise FloatingPointError(f"损失不是有限数：{value} (the loss is not finite: {value})")
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    grads = [p.grad.detach().flatten() for p in model.parameters() if p.grad is not None]
    grad_norm = torch.linalg.vector_norm(torch.cat(grads)).item()
    optimizer.step()
    return value, grad_norm

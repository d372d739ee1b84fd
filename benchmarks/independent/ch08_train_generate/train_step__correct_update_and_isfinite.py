# exercise: train_step
# kind: correct
# class: rule
# rule: correct; sets the rate with dict.update on each group, tests finiteness on the tensor
#       with torch.isfinite, runs backward through torch.autograd.backward, and converts with
#       float() instead of .item(); the order of the seven steps is the stated one.
def train_step(model, optimizer, inputs, targets, lr, max_grad_norm=1.0):
    for group in optimizer.param_groups:
        group.update(lr=lr)
    optimizer.zero_grad(set_to_none=True)
    loss = model(inputs, targets).loss
    if not bool(torch.isfinite(loss.detach()).all()):
        value = float(loss.detach())
        raise FloatingPointError(f"损失不是有限数：{value}，训练停止。 (non-finite loss {value}: training stopped)")
    torch.autograd.backward(loss)
    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()
    return float(loss.detach()), float(grad_norm)

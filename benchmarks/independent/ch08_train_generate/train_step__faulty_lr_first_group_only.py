# exercise: train_step
# kind: faulty
# class: rule
# rule: 'set "lr" of every param group to `lr`' (docstring; notebook "写进优化器的每个参数组").
#       This body writes the rate only into optimizer.param_groups[0].
# shows: AdamW(parameter_groups(tiny_lm, 0.1), lr=1.0): after train_step(..., lr=1e-3) group 1
#        (biases, LayerNorms, embeddings) still has lr 1.0 and takes a huge step.
def train_step(model, optimizer, inputs, targets, lr, max_grad_norm=1.0):
    optimizer.param_groups[0]["lr"] = lr
    optimizer.zero_grad(set_to_none=True)
    loss = model(inputs, targets).loss
    value = loss.item()
    if not math.isfinite(value):
        raise FloatingPointError(f"损失不是有限数：{value} (the loss is not finite: {value})")
    loss.backward()
    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()
    return value, grad_norm.item()

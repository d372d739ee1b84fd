# exercise: evaluate
# kind: faulty
# class: gradient
# rule: "Runs under torch.no_grad()" (docstring; notebook "放在 torch.no_grad() 里（不建计算图）").
#       This body switches to eval mode and restores it, but runs the forward passes with
#       gradients enabled, so every batch builds an autograd graph (the value is right).
# shows: any call: a forward pre-hook sees torch.is_grad_enabled() == True, and each batch loss
#        has a grad_fn (memory for a graph that is never used).
def evaluate(model, data, block_size, batch_size):
    T = block_size
    n_windows = (len(data) - 1) // T
    was_training = model.training
    model.eval()
    total, tokens = 0.0, 0
    try:
        for first in range(0, n_windows, batch_size):
            last = min(first + batch_size, n_windows)
            x = data[first * T : last * T].view(last - first, T)
            y = data[first * T + 1 : last * T + 1].view(last - first, T)
            total += model(x, y).loss.item() * y.numel()
            tokens += y.numel()
    finally:
        model.train(was_training)
    return total / tokens

# exercise: evaluate
# kind: faulty
# class: rule
# rule: "Runs under torch.no_grad() in eval mode" (docstring; notebook "评估模式（model.eval()，关掉
#       dropout）").  This body uses no_grad but never switches to eval mode (it leaves the mode
#       untouched, so "restoring" is trivially right), so dropout stays on for a training model.
# shows: a tiny LM with dropout = 0.5 in training mode: the result is a random loss that changes
#        from call to call (e.g. 2.3966, 2.3944) instead of the deterministic eval-mode loss 2.4007 (identical to the
#        right answer only when dropout is 0 or the model is already in eval mode).
def evaluate(model, data, block_size, batch_size):
    T = block_size
    n_windows = (len(data) - 1) // T
    total, tokens = 0.0, 0
    with torch.no_grad():
        for first in range(0, n_windows, batch_size):
            last = min(first + batch_size, n_windows)
            x = data[first * T : last * T].view(last - first, T)
            y = data[first * T + 1 : last * T + 1].view(last - first, T)
            total += model(x, y).loss.item() * y.numel()
            tokens += y.numel()
    return total / tokens

# exercise: evaluate
# kind: correct
# class: rule
# rule: correct; reshapes all windows at once with view, walks them with torch.split, turns
#       gradients off with torch.set_grad_enabled(False) (same effect as no_grad), sums
#       loss * token count in float64 and restores the saved mode in a finally block.
def evaluate(model, data, block_size, batch_size):
    n_windows = (len(data) - 1) // block_size
    used = n_windows * block_size
    inputs = data[:used].reshape(n_windows, block_size)
    targets = data[1 : used + 1].reshape(n_windows, block_size)
    was_training = model.training
    total, tokens = 0.0, 0
    model.eval()
    try:
        with torch.set_grad_enabled(False):
            for x, y in zip(torch.split(inputs, batch_size), torch.split(targets, batch_size)):
                count = y.numel()
                total += float(model(x, y).loss.double()) * count
                tokens += count
    finally:
        model.train(was_training)
    return float(total / tokens)

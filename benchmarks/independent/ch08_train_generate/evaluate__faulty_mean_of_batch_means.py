# exercise: evaluate
# kind: faulty
# class: value
# rule: "the batch losses are averaged weighted by their token counts" (docstring; the notebook's
#       example: batch means 4.0 (2 windows) and 1.0 (1 window) give 3.0, not 2.5).  This body
#       takes the plain mean of the batch means, over-weighting a short last batch.
# shows: data of 40 ids, block_size 6, batch_size 4: 6 windows in batches of 4 and 2; the result
#        is (m1 + m2) / 2 instead of (4 m1 + 2 m2) / 6.
def evaluate(model, data, block_size, batch_size):
    T = block_size
    n_windows = (len(data) - 1) // T
    was_training = model.training
    model.eval()
    batch_means = []
    with torch.no_grad():
        for first in range(0, n_windows, batch_size):
            rows = range(first, min(first + batch_size, n_windows))
            x = torch.stack([data[i * T : i * T + T] for i in rows])
            y = torch.stack([data[i * T + 1 : i * T + T + 1] for i in rows])
            batch_means.append(model(x, y).loss.item())
    model.train(was_training)
    return sum(batch_means) / len(batch_means)

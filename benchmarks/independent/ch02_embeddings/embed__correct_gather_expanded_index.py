# exercise: embed
# kind: correct
# class: value
# rule: reads the rows with Tensor.gather along axis 0, using the flat ids expanded over the d columns
#       as the index, then reshapes; range checked with min/max on the flat ids (skipped when empty).
# shows: n/a (correct body)
def embed(ids, weight):
    vocab, width = weight.shape
    flat = ids.reshape(-1).long()
    if flat.numel():
        if int(flat.min()) < 0 or int(flat.max()) >= vocab:
            raise ValueError(f"every id must be in [0, {vocab})")
    index = flat.unsqueeze(1).expand(flat.shape[0], width)
    rows = torch.gather(weight, 0, index)
    return rows.view(tuple(ids.shape) + (width,))

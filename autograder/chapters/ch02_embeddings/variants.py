"""Correct chapter-2 exercise bodies written differently from the reference.

Every one must get full marks: they pin the tolerance policy and the probes to what the
exercise asks, not to how the reference happens to compute it.  None of them calls another
exercise (each is graded alone, whatever state the others are in).  `hero samples OUT` writes
one sample per variant (`correct_<id>`) and the tests grade each of them.  Same conventions as
faults.py.
"""

import torch  # noqa: F401  (used by variant bodies)

from autograder.registry import catalogue

CATALOGUE, variant = catalogue("correct")


@variant("one_hot", "a comparison with arange, then a cast")
def compare_with_arange(ids, vocab_size, dtype=torch.float32):
    if ids.is_floating_point() or ids.is_complex() or ids.dtype == torch.bool:
        raise TypeError("ids must be an integer tensor")
    wide = ids.long()  # compared in int64: in uint8, vocab_size=300 would wrap to 44
    if ((wide < 0) | (wide >= vocab_size)).any():
        raise ValueError("an id is out of range")
    return (wide.unsqueeze(-1) == torch.arange(vocab_size, device=ids.device)).to(dtype)


@variant("one_hot", "torch.nn.functional.one_hot (int64), cast to the dtype asked for")
def functional_one_hot(ids, vocab_size, dtype=torch.float32):
    if torch.is_floating_point(ids):
        raise TypeError("ids must be an integer tensor")
    if ids.numel() > 0 and not (0 <= int(ids.min()) and int(ids.max()) < vocab_size):
        raise ValueError("an id is out of range")
    return torch.nn.functional.one_hot(ids.long(), vocab_size).to(dtype)


@variant("one_hot", "rows of an identity matrix")
def identity_rows(ids, vocab_size, dtype=torch.float32):
    if ids.dtype.is_floating_point:
        raise TypeError("ids must be an integer tensor")
    flat = ids.reshape(-1).long()
    if flat.numel() and (flat.min().item() < 0 or flat.max().item() > vocab_size - 1):
        raise ValueError("an id is out of range")
    eye = torch.eye(vocab_size, dtype=dtype, device=ids.device)
    return eye.index_select(0, flat).reshape(*ids.shape, vocab_size)


@variant("embed", "index_select on the flattened ids, reshaped")
def index_select_lookup(ids, weight):
    vocab_size, width = weight.shape
    flat = ids.reshape(-1)
    if flat.numel() and (flat.min().item() < 0 or flat.max().item() >= vocab_size):
        raise ValueError("an id is out of range")
    return weight.index_select(0, flat).reshape(*ids.shape, width)


@variant("embed", "the one-hot product, one-hot rows built inline (no other exercise)")
def one_hot_product(ids, weight):
    vocab_size = weight.shape[0]
    if bool((ids < 0).any()) or bool((ids >= vocab_size).any()):
        raise ValueError("an id is out of range")
    rows = (ids.unsqueeze(-1) == torch.arange(vocab_size, device=ids.device)).to(weight.dtype)
    return rows @ weight


@variant("embed", "torch.stack of the rows, one id at a time")
def stacked_rows(ids, weight):
    vocab_size, width = weight.shape
    values = ids.reshape(-1).tolist()
    if any(i < 0 or i >= vocab_size for i in values):
        raise ValueError("an id is out of range")
    if not values:
        return weight.new_zeros(*ids.shape, width)
    return torch.stack([weight[i] for i in values]).reshape(*ids.shape, width)


@variant("embedding_grad", "the transposed one-hot product: one_hot(ids)^T @ upstream")
def one_hot_transposed_product(ids, upstream, vocab_size):
    width = upstream.shape[-1]
    rows = (ids.reshape(-1, 1) == torch.arange(vocab_size, device=ids.device)).to(upstream.dtype)
    return rows.T @ upstream.reshape(-1, width)


@variant("embedding_grad", "autograd through plain indexing (not the embedding op)")
def autograd_through_indexing(ids, upstream, vocab_size):
    with torch.enable_grad():
        table = torch.zeros(vocab_size, upstream.shape[-1], dtype=upstream.dtype, device=upstream.device,
                            requires_grad=True)
        (table[ids] * upstream).sum().backward()
    return table.grad


@variant("embedding_grad", "a loop over positions, accumulating row by row")
def accumulate_in_a_loop(ids, upstream, vocab_size):
    width = upstream.shape[-1]
    grad = upstream.new_zeros(vocab_size, width)
    for position, row in zip(ids.reshape(-1).tolist(), upstream.reshape(-1, width)):
        grad[position] += row
    return grad


@variant("init_normal", "torch.nn.init.normal_ with the generator")
def nn_init_normal(weight, std=0.02, generator=None):
    return torch.nn.init.normal_(weight, mean=0.0, std=std, generator=generator)

"""Chapter 2: ids to vectors.

An embedding is a table W of shape [V, d]; looking up id i reads row i, which is the same
as multiplying the one-hot row vector of i by W.  The model (model.TransformerLM) stores its
tables as nn.Embedding, whose `weight` is exactly this W; this chapter writes what it does.

Exercise bodies are fenced with nbgrader's solution markers; a chapter's student release
replaces them with ``raise NotImplementedError('<id>')``.
"""

import torch

INIT_STD = 0.02  # seed 003: every embedding and linear weight starts as N(0, 0.02^2)


def one_hot(ids, vocab_size, dtype=torch.float32):
    """[...] integer ids -> [..., vocab_size] rows of zeros with a single 1 at each id.
    TypeError for ids that are not integers, ValueError for an id outside [0, vocab_size)."""
    if ids.dtype not in (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8):
        raise TypeError(f"ids 应为整数张量，收到 {ids.dtype} (ids must be an integer tensor)")
    if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= vocab_size):
        raise ValueError(f"id 超出 [0, {vocab_size}) (an id is out of range)")
    rows = torch.zeros(*ids.shape, vocab_size, dtype=dtype, device=ids.device)
    return rows.scatter_(-1, ids.long().unsqueeze(-1), 1.0)


def embed(ids, weight):
    """[B, T] ids and a [V, d] table -> [B, T, d]: row ids[b, t] of the table at (b, t).
    ValueError for an id outside [0, V)."""
    if ids.numel() and (ids.min() < 0 or ids.max() >= weight.shape[0]):
        raise ValueError(f"id 超出 [0, {weight.shape[0]}) (an id is out of range)")
    return weight[ids]


def embedding_grad(ids, upstream, vocab_size):
    """The gradient of the loss with respect to the [V, d] table, given the gradient
    `upstream` ([B, T, d]) with respect to the looked-up vectors: row i is the sum of the
    upstream rows at the positions that read id i; a row no position read is zero."""
    width = upstream.shape[-1]
    grad = torch.zeros(vocab_size, width, dtype=upstream.dtype, device=upstream.device)
    return grad.index_add_(0, ids.reshape(-1), upstream.reshape(-1, width))


def init_normal_(weight, std=INIT_STD, generator=None):
    """Fill `weight` in place with N(0, std^2) samples drawn from `generator` by torch's own normal
    sampling (weight.normal_ or torch.nn.init.normal_), so a seed gives the reference's numbers
    exactly (another normal sampler, Box-Muller say, gives other numbers); returns it."""
    with torch.no_grad():
        return weight.normal_(0.0, std, generator=generator)

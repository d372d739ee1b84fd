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
    # 练习 one_hot：one-hot 编码（见本章 notebook）
    raise NotImplementedError('one_hot')


def embed(ids, weight):
    """[B, T] ids and a [V, d] table -> [B, T, d]: row ids[b, t] of the table at (b, t).
    ValueError for an id outside [0, V)."""
    # 练习 embed：查表：[B,T] 到 [B,T,d]（见本章 notebook）
    raise NotImplementedError('embed')


def embedding_grad(ids, upstream, vocab_size):
    """The gradient of the loss with respect to the [V, d] table, given the gradient
    `upstream` ([B, T, d]) with respect to the looked-up vectors: row i is the sum of the
    upstream rows at the positions that read id i; a row no position read is zero."""
    # 练习 embedding_grad：嵌入表的梯度（见本章 notebook）
    raise NotImplementedError('embedding_grad')


def init_normal_(weight, std=INIT_STD, generator=None):
    """Fill `weight` in place with N(0, std^2) samples drawn from `generator` by torch's own normal
    sampling (weight.normal_ or torch.nn.init.normal_), so a seed gives the reference's numbers
    exactly (another normal sampler, Box-Muller say, gives other numbers); returns it."""
    # 练习 init_normal：N(0, 0.02²) 初始化（见本章 notebook）
    raise NotImplementedError('init_normal')

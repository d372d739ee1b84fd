"""Chapter 3: learned absolute positions.

The model learns one vector per position, a table P of shape [C, d] (C = block_size rows):
the input of the first block at position t is tok[t] + P[t].  Only C rows exist, so a
sequence longer than C has no vector for its later positions: that is an error, never a
silent wrap-around.  With a KV cache the new tokens continue at position `start` (the
number already cached).

Exercise bodies are fenced with nbgrader's solution markers; a chapter's student release
replaces them with ``raise NotImplementedError('<id>')``.
"""

import math

import torch


def position_ids(length, block_size, start=0):
    """The positions of `length` tokens that follow `start` earlier ones: start, ...,
    start + length - 1, as an int64 tensor.  ValueError when start + length > block_size (the
    table has no row for the last one; with length 0, when start itself is past the table), or
    when start or length is negative."""
    # 练习 position_ids：位置编号与长度上限（见本章 notebook）
    raise NotImplementedError('position_ids')


def add_positions(token_vectors, table, start=0):
    """[B, T, d] token vectors plus rows start .. start+T-1 of the [C, d] position table,
    the same rows for every sequence of the batch.  ValueError when start + T > C."""
    # 练习 add_positions：把位置表加到词向量上（见本章 notebook）
    raise NotImplementedError('add_positions')


def untrained_positions(lengths, block_size):
    """The rows of a [block_size, d] position table that no training sequence reads, given the
    lengths of the training sequences (each read from position 0): they keep their initial
    values and get no gradient, ascending."""
    # 练习 untrained_positions：从未被训练的位置行（见本章 notebook）
    raise NotImplementedError('untrained_positions')


def sinusoidal_positions(length, width, base=10000.0):
    """The fixed sinusoidal table of the original Transformer, for comparison only (the course
    model learns its positions): even columns sin(t / base^(2i/d)), odd columns cos of the same."""
    positions = torch.arange(length, dtype=torch.float64)[:, None]
    frequencies = base ** (-torch.arange(0, width, 2, dtype=torch.float64) / width)
    table = torch.zeros(length, width, dtype=torch.float64)
    table[:, 0::2] = torch.sin(positions * frequencies)
    table[:, 1::2] = torch.cos(positions * frequencies[: width // 2])
    return table.float()


def sinusoidal_wavelengths(width, base=10000.0):
    """The wavelength, in positions, of each sin/cos pair: 2*pi*base^(2i/d)."""
    return [2 * math.pi * base ** (i / width) for i in range(0, width, 2)]

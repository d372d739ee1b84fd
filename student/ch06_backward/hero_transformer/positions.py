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
    if start < 0 or length < 0:
        raise ValueError(f"start={start} 和 length={length} 不能为负 (must not be negative)")
    if start + length > block_size:
        raise ValueError(f"序列长度 {start + length} 超过 block_size={block_size}，位置表没有这么多行 "
                         f"(sequence length {start + length} exceeds block_size={block_size})")
    return torch.arange(start, start + length)


def add_positions(token_vectors, table, start=0):
    """[B, T, d] token vectors plus rows start .. start+T-1 of the [C, d] position table,
    the same rows for every sequence of the batch.  ValueError when start + T > C."""
    length = token_vectors.shape[1]
    if start + length > table.shape[0]:
        raise ValueError(f"序列长度 {start + length} 超过 block_size={table.shape[0]}，位置表没有这么多行 "
                         f"(sequence length {start + length} exceeds block_size={table.shape[0]})")
    return token_vectors + table[start : start + length]


def untrained_positions(lengths, block_size):
    """The rows of a [block_size, d] position table that no training sequence reads, given the
    lengths of the training sequences (each read from position 0): they keep their initial
    values and get no gradient, ascending."""
    longest = max(lengths, default=0)
    return list(range(min(longest, block_size), block_size))


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

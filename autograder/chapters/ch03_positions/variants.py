"""Correct chapter-3 exercise bodies written differently from the reference.

Every one must get full marks, also with the chapter's other exercises stubbed or faulty: they
pin the probes to what the exercise asks, not to how the reference happens to compute it.
`hero samples OUT` writes one sample per variant (`correct_<id>`).  Same conventions as
faults.py: only the names positions.py imports (torch, math).
"""

import math  # noqa: F401  (positions.py's own imports)

import torch  # noqa: F401

from autograder.registry import catalogue

CATALOGUE, variant = catalogue("correct")


@variant("position_ids", "a list of ints made into an int64 tensor, the bound written as the last id")
def listed_ids(length, block_size, start=0):
    if min(start, length) < 0:
        raise ValueError("start and length must not be negative")
    last = start + length - 1
    if last >= block_size:
        raise ValueError(f"position {last} has no row in a table of {block_size}")
    return torch.tensor([start + i for i in range(length)], dtype=torch.long)


@variant("position_ids", "arange(length) shifted by start")
def shifted_arange(length, block_size, start=0):
    if start < 0 or length < 0 or start + length > block_size:
        raise ValueError("no such rows")
    return torch.arange(length, dtype=torch.int64) + start


@variant("add_positions", "rows read through integer ids, the batch axis added explicitly")
def indexed_rows(token_vectors, table, start=0):
    batch, length, width = token_vectors.shape
    if start + length > table.shape[0]:
        raise ValueError("not enough rows")
    ids = torch.arange(start, start + length, device=table.device)
    return token_vectors + table[ids].unsqueeze(0)


@variant("add_positions", "narrow, expanded over the batch, table first")
def narrowed_rows(token_vectors, table, start=0):
    length = token_vectors.size(1)
    if table.size(0) - start < length:
        raise ValueError("not enough rows")
    return table.narrow(0, start, length).expand_as(token_vectors) + token_vectors


@variant("add_positions", "index_select and torch.add")
def selected_rows(token_vectors, table, start=0):
    length = token_vectors.shape[-2]
    if start + length > len(table):
        raise ValueError("not enough rows")
    rows = table.index_select(0, torch.arange(start, start + length, device=table.device))
    return torch.add(token_vectors, rows[None])


@variant("untrained_positions", "a filter over every row")
def filtered_rows(lengths, block_size):
    longest = max(lengths) if lengths else 0
    return [row for row in range(block_size) if row >= longest]


@variant("untrained_positions", "the set of every row minus the rows read, sorted")
def set_difference(lengths, block_size):
    read = set()
    for length in lengths:
        read |= set(range(length))
    return sorted(set(range(block_size)) - read)

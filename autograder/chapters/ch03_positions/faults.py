"""Known misconceptions of chapter 3, each written as a faulty exercise body.

One catalogue serves two purposes:
- diagnosis: when a student's outputs match a fault's outputs on the hidden cases, the
  feedback names that misconception;
- samples: `hero samples OUT` writes one faulty sample submission per fault (reference
  everywhere else), and the tests prove each one loses points exactly on its exercise.

Each function has the signature of the exercise it replaces and uses only names that
positions.py itself imports (torch, math).
"""

import math  # noqa: F401  (positions.py's own imports)

import torch  # noqa: F401

from autograder.registry import catalogue

CATALOGUE, fault = catalogue("fault")


# --- position_ids ----------------------------------------------------------------------


@fault("position_ids", "边界差一：start + T 恰好等于 C 时最后一行 C-1 存在，却报了错（用了 >= 而不是 >）。",
       "off by one at the bound: with start + T equal to C the last row C-1 exists, yet it raised (>= instead of >).")
def bound_off_by_one(length, block_size, start=0):
    if start < 0 or length < 0:
        raise ValueError("negative")
    if start + length >= block_size:
        raise ValueError("too long")
    return torch.arange(start, start + length)


@fault("position_ids", "忽略了 start：缓存里已有 start 个词元，新词元应从 start 接着编号，而不是又从 0 开始。",
       "start is ignored: start tokens are already cached, so the new ids continue at start instead of restarting "
       "at 0.")
def start_ignored(length, block_size, start=0):
    if start < 0 or length < 0:
        raise ValueError("negative")
    if start + length > block_size:
        raise ValueError("too long")
    return torch.arange(length)


@fault("position_ids", "编号从 1 开始；位置表的行从 0 数起，第一个词元读第 0 行。",
       "the ids start at 1; the table's rows count from 0, and the first token reads row 0.")
def ids_from_one(length, block_size, start=0):
    if start < 0 or length < 0:
        raise ValueError("negative")
    if start + length > block_size:
        raise ValueError("too long")
    return torch.arange(start + 1, start + length + 1)


@fault("position_ids", "编号是浮点数；它们要拿去索引位置表的行，应为整数 int64。",
       "the ids are floats; they index rows of the table, so they must be int64 integers.")
def float_ids(length, block_size, start=0):
    if start < 0 or length < 0:
        raise ValueError("negative")
    if start + length > block_size:
        raise ValueError("too long")
    return torch.arange(start, start + length, dtype=torch.float32)


@fault("position_ids", "超出 C 的位置被截断（clamp）到最后一行 C-1，而不是报错：后面的词元全挤在同一个位置上。",
       "positions past C are clamped to the last row C-1 instead of raising: every later token lands on one position.")
def clamped_to_last_row(length, block_size, start=0):
    if start < 0 or length < 0:
        raise ValueError("negative")
    return torch.arange(start, start + length).clamp(max=block_size - 1)


@fault("position_ids", "超出 C 的位置取模绕回了开头（% C），而不是报错：位置 C 被当成了位置 0。",
       "positions past C wrap around to the start (% C) instead of raising: position C is taken for position 0.")
def wrapped_around(length, block_size, start=0):
    if start < 0 or length < 0:
        raise ValueError("negative")
    return torch.arange(start, start + length) % block_size


@fault("position_ids", "只检查了本次的长度 T <= C，没有把缓存里的 start 个词元算进去：应检查 start + T <= C。",
       "only the new length T <= C is checked, without the start cached tokens: the bound is start + T <= C.")
def bound_ignores_start(length, block_size, start=0):
    if start < 0 or length < 0:
        raise ValueError("negative")
    if length > block_size:
        raise ValueError("too long")
    return torch.arange(start, start + length)


@fault("position_ids", "负的 start 没有被拒绝：负编号在 PyTorch 里会从表尾倒着取行，悄悄变成另一个位置。",
       "a negative start is not refused: PyTorch reads a negative index from the end of the table, silently another "
       "position.")
def negative_start_accepted(length, block_size, start=0):
    if start + length > block_size:
        raise ValueError("too long")
    return torch.arange(start, start + length)


# --- add_positions ---------------------------------------------------------------------


@fault("add_positions", "忽略了 start：总是取第 0 到 T-1 行（table[:T]）；有缓存时新词元应取第 start 到 start+T-1 行。",
       "start is ignored: rows 0 to T-1 are always taken (table[:T]); after a cache the new tokens take rows start "
       "to start+T-1.")
def rows_from_zero(token_vectors, table, start=0):
    if start + token_vectors.shape[1] > table.shape[0]:
        raise ValueError("too long")
    return token_vectors + table[: token_vectors.shape[1]]


@fault("add_positions", "取了位置表的最后 T 行（table[-T:]）；位置 t 读第 t 行，从 start 数起，不是从表尾倒数。",
       "the last T rows of the table were taken (table[-T:]); position t reads row t, counted from start, not from "
       "the end of the table.")
def last_rows(token_vectors, table, start=0):
    if start + token_vectors.shape[1] > table.shape[0]:
        raise ValueError("too long")
    return token_vectors + table[-token_vectors.shape[1]:]


@fault("add_positions", "沿错误的轴广播：给批量里每条序列各取了一行（行数对着 B），而位置行应对着时间轴 T、"
       "由所有序列共用。",
       "broadcast over the wrong axis: one row per sequence of the batch (rows along B), where the rows run along "
       "the time axis T and every sequence shares them.")
def rows_per_sequence(token_vectors, table, start=0):
    if start + token_vectors.shape[1] > table.shape[0]:
        raise ValueError("too long")
    return token_vectors + table[start : start + token_vectors.shape[0]].unsqueeze(1)


@fault("add_positions", "把位置向量拼接（cat）到词向量后面，宽度变成 2d；学习式位置向量是逐元素相加的。",
       "the position vectors were concatenated (cat) after the token vectors, making the width 2d; learned positions "
       "are added element-wise.")
def concatenated(token_vectors, table, start=0):
    if start + token_vectors.shape[1] > table.shape[0]:
        raise ValueError("too long")
    batch, length = token_vectors.shape[:2]
    return torch.cat([token_vectors, table[start : start + length].expand(batch, -1, -1)], dim=-1)


@fault("add_positions", "没有检查 start + T <= C：切片 table[start:start+T] 悄悄变短，只剩一行时被广播到所有位置，"
       "否则由 PyTorch 报形状错误；应先抛出明确的 ValueError。",
       "start + T <= C is not checked: the slice table[start:start+T] silently comes out shorter, a single row is "
       "broadcast to every position, and otherwise PyTorch raises a shape error; raise a clear ValueError first.")
def no_bound_check(token_vectors, table, start=0):
    return token_vectors + table[start : start + token_vectors.shape[1]]


@fault("add_positions", "边界差一：start + T 恰好等于 C 时最后一行 C-1 存在，却报了错（用了 >= 而不是 >）。",
       "off by one at the bound: with start + T equal to C the last row C-1 exists, yet it raised (>= instead of >).")
def add_bound_off_by_one(token_vectors, table, start=0):
    if start + token_vectors.shape[1] >= table.shape[0]:
        raise ValueError("too long")
    return token_vectors + table[start : start + token_vectors.shape[1]]


@fault("add_positions", "超出 C 的位置被截断（clamp）到最后一行，而不是报错：后面的词元都拿到同一个位置向量。",
       "positions past C are clamped to the last row instead of raising: every later token gets the same position "
       "vector.")
def clamped_rows(token_vectors, table, start=0):
    rows = torch.arange(start, start + token_vectors.shape[1], device=table.device).clamp(max=table.shape[0] - 1)
    return token_vectors + table[rows]


@fault("add_positions", "超出 C 的位置取模绕回了表头（% C），而不是报错：位置 C 拿到了位置 0 的向量。",
       "positions past C wrap around to the top of the table (% C) instead of raising: position C gets the vector of "
       "position 0.")
def wrapped_rows(token_vectors, table, start=0):
    rows = torch.arange(start, start + token_vectors.shape[1], device=table.device) % table.shape[0]
    return token_vectors + table[rows]


@fault("add_positions", "只检查了本次的长度 T <= C，没有把缓存里的 start 个词元算进去：应检查 start + T <= C。",
       "only the new length T <= C is checked, without the start cached tokens: the bound is start + T <= C.")
def add_bound_ignores_start(token_vectors, table, start=0):
    if token_vectors.shape[1] > table.shape[0]:
        raise ValueError("too long")
    return token_vectors + table[start : start + token_vectors.shape[1]]


# --- untrained_positions --------------------------------------------------------------


@fault("untrained_positions", "差一：长度为 L 的序列读第 0 到 L-1 行，第 L 行没有被读到，也应列出。",
       "off by one: a sequence of length L reads rows 0 to L-1, so row L is unread and belongs in the list.")
def untrained_off_by_one(lengths, block_size):
    longest = max(lengths, default=0)
    return list(range(min(longest + 1, block_size), block_size))


@fault("untrained_positions", "用了最短的序列长度；只要有一条序列读到某一行，这一行就得到梯度，所以要看最长的那条。",
       "the shortest length was used; a row gets a gradient as soon as one sequence reads it, so the longest "
       "sequence decides.")
def shortest_length(lengths, block_size):
    shortest = min(lengths, default=0)
    return list(range(min(shortest, block_size), block_size))


@fault("untrained_positions", "列出的是训练过的行（0 到 L-1）；题目要的是没有任何序列读到的那些行。",
       "the trained rows (0 to L-1) were listed; the question asks for the rows no sequence reads.")
def trained_rows(lengths, block_size):
    longest = max(lengths, default=0)
    return list(range(min(longest, block_size)))


@fault("untrained_positions", "行号按降序排列；应按升序给出。",
       "the rows are listed in descending order; they are asked in ascending order.")
def descending_rows(lengths, block_size):
    longest = max(lengths, default=0)
    return list(range(block_size - 1, min(longest, block_size) - 1, -1))

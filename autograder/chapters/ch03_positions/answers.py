"""The answer cells of chapter 3: what each asks, its expected value and the known mistakes its
feedback can name.

The walkthrough computes its own figures (the C=4, d=2 table added to a B=2, T=3 batch, the
continuation at start=2, the error past C, C*d = 8 whatever T is, seed 003's 64-of-256 rows,
sinusoidal values and wavelengths for d=4) in given cells.  Each graded answer asks for the same
calculation on inputs the walkthrough does not use, so its value is written nowhere in the
student's notebook (tests/test_ch03_positions.py proves it).  Expected values are computed here
from the reference, never typed in; a mistake's value is computed the way the mistake computes it.
"""

import math

import torch

from autograder.registry import Answer, Mistake

# --- the questions' inputs (the notebook states them in its own words) ------------------

NEW_TOKENS = dict(cached=13, new=4, block_size=20)  # new_token_positions
SUM_TABLE = ((0.3, -0.6), (1.1, 0.4), (-0.7, 0.9), (0.2, -1.3), (0.8, 0.5))  # cached_position_sum: C=5, d=2
SUM_TOKENS = (((0.6, 1.5), (-1.2, 0.7)), ((2.1, -0.25), (0.3, 0.6)))  # B=2 sequences of T=2 new tokens
SUM_START = 1
TABLE = dict(C=48, d=24, lengths=(1, 30, 48))  # position_table_params
TRAINING = dict(lengths=(5, 12, 9), block_size=16)  # untrained_rows
GENERATION = dict(block_size=640, cached=457)  # positions_left
SINUSOID = dict(t=300, width=8, column=3)  # sinusoid_value
WAVELENGTH_WIDTH = 16  # longest_wavelength


def _new_token_positions(positions, shift=0, ignore_cache=False):
    ids = positions.position_ids(NEW_TOKENS["new"], NEW_TOKENS["block_size"],
                                 start=0 if ignore_cache else NEW_TOKENS["cached"])
    return (ids + shift).tolist()


def _cached_sum(positions, rows=None):
    x = torch.tensor(SUM_TOKENS, dtype=torch.float64)
    table = torch.tensor(SUM_TABLE, dtype=torch.float64)
    if rows is None:
        return positions.add_positions(x, table, start=SUM_START)
    return x + table[list(rows)]  # a mistake: the wrong rows


def _table_params(model, per_length=False):
    C, d = TABLE["C"], TABLE["d"]
    if per_length:  # a mistake: the count of the rows one input reads, T*d
        return [T * d for T in TABLE["lengths"]]
    lm = model.TransformerLM(model.Config(vocab_size=3, block_size=C, d_model=d, n_heads=2, n_layers=1, d_ff=8,
                                          dropout=0.0))
    return [lm.position_embedding.weight.numel() for _ in TABLE["lengths"]]  # T enters nowhere


def _positions_left(positions):
    """Feed one token at a time after the cache until position_ids refuses."""
    fed = 0
    while True:
        try:
            positions.position_ids(1, GENERATION["block_size"], start=GENERATION["cached"] + fed)
        except ValueError:
            return fed
        fed += 1


def _sinusoid(positions):
    t, width, column = SINUSOID["t"], SINUSOID["width"], SINUSOID["column"]
    return positions.sinusoidal_positions(t + 1, width)[t, column].item()


def _sinusoid_mistake(exponent_index, function):
    t, width = SINUSOID["t"], SINUSOID["width"]
    return function(t / 10000.0 ** (exponent_index / width))


ANSWERS = (
    Answer("new_token_positions", "new_token_positions", "缓存 13 个词元后再送入 4 个：它们的位置编号（C=20）",
           "positions of 4 new tokens after 13 cached ones (C=20)",
           lambda p: _new_token_positions(p), exact=True, module="positions",
           mistakes=(
               Mistake(lambda p: _new_token_positions(p, ignore_cache=True),
                       "这些编号又从 0 数起，忽略了缓存里已有的词元；新词元接在 start（缓存长度）之后。",
                       "these ids restart at 0, ignoring the cached tokens; new tokens continue after start (the "
                       "cache's length)."),
               Mistake(lambda p: _new_token_positions(p, shift=1),
                       "编号多了 1：位置从 0 数起，缓存里的 13 个词元占的是第 0 到 12 个位置。",
                       "the ids are one too high: positions count from 0, so the 13 cached tokens sit at positions "
                       "0 to 12."),
           )),
    Answer("cached_position_sum", "cached_position_sum", "有缓存时（start=1）两条序列加上位置向量之后的结果",
           "two sequences plus their position vectors after a cache (start=1)",
           lambda p: _cached_sum(p), module="positions",
           mistakes=(
               Mistake(lambda p: _cached_sum(p, rows=(0, 1)),
                       "用的是位置表的第 0、1 行，忽略了 start：缓存里已有 1 个词元，新词元读第 1、2 行。",
                       "rows 0 and 1 were used, ignoring start: one token is cached, so the new tokens read rows 1 "
                       "and 2."),
               Mistake(lambda p: _cached_sum(p, rows=(3, 4)),
                       "用的是位置表的最后两行；位置 t 读第 t 行，从表头数，不从表尾倒数。",
                       "the last two rows were used; position t reads row t, counted from the top of the table, not "
                       "from its end."),
               Mistake(lambda p: _cached_sum(p, rows=(2, 3)),
                       "行号多了 1：start=1 表示第一个新词元在位置 1，读第 1 行（行从 0 数起）。",
                       "the rows are one too far: start=1 puts the first new token at position 1, which reads row 1 "
                       "(rows count from 0)."),
           )),
    Answer("position_table_params", "position_table_params", "C=48, d=24 的位置表在 T=1、30、48 时的参数量",
           "parameters of the C=48, d=24 position table for T=1, 30, 48",
           lambda m: _table_params(m), exact=True, module="model",
           mistakes=(
               Mistake(lambda m: _table_params(m, per_length=True),
                       "这是一次输入读到的行数乘 d（T·d），是激活的量，不是参数量：位置表注册了全部 C 行，"
                       "参数量是 C·d，与 T 无关。",
                       "this is the rows one input reads times d (T*d), a count of activations, not of parameters: "
                       "the table registers all C rows, C*d parameters whatever T is."),
           )),
    Answer("untrained_rows", "untrained_rows", "训练长度 5、12、9，C=16：从未被训练的行",
           "rows never trained, for training lengths 5, 12, 9 and C=16",
           lambda p: p.untrained_positions(list(TRAINING["lengths"]), TRAINING["block_size"]), exact=True,
           module="positions",
           mistakes=(
               Mistake(lambda p: list(range(min(TRAINING["lengths"]), TRAINING["block_size"])),
                       "这是按最短序列算的；只要有一条序列读到某一行，这一行就有梯度，应看最长的序列。",
                       "this follows the shortest sequence; a row gets a gradient as soon as one sequence reads it, "
                       "so the longest sequence decides."),
               Mistake(lambda p: list(range(max(TRAINING["lengths"]) + 1, TRAINING["block_size"])),
                       "少了一行：长度为 L 的序列读第 0 到 L-1 行，第 L 行没有被读到。",
                       "one row is missing: a sequence of length L reads rows 0 to L-1, so row L is unread."),
               Mistake(lambda p: list(range(max(TRAINING["lengths"]))),
                       "这些是训练过的行；题目要的是没有任何序列读到的行。",
                       "these are the trained rows; the question asks for the rows no sequence reads."),
           )),
    Answer("positions_left", "positions_left", "C=640、缓存已有 457 个词元：还能逐个送入多少个新词元",
           "new tokens that can still be fed one at a time with 457 cached and C=640",
           lambda p: _positions_left(p), exact=True, module="positions",
           mistakes=(
               Mistake(lambda p: _positions_left(p) - 1,
                       "少了 1：最后一行 C-1 也存在，start + T 恰好等于 C 时不报错。",
                       "one too few: the last row C-1 exists, and start + T equal to C raises nothing."),
               Mistake(lambda p: _positions_left(p) + 1,
                       "多了 1：位置 C 没有对应的行（行号是 0 到 C-1），送入它就会报错。",
                       "one too many: position C has no row (rows run from 0 to C-1), so feeding it raises."),
           )),
    Answer("sinusoid_value", "sinusoid_value", "d=8 的正弦位置编码在 t=300、第 3 列的值",
           "the d=8 sinusoidal encoding at t=300, column 3",
           lambda p: _sinusoid(p), module="positions",
           mistakes=(
               Mistake(lambda p: _sinusoid_mistake(2, math.sin),
                       "奇数列是 cos，偶数列才是 sin；第 3 列是第 1 对的 cos。",
                       "odd columns hold cos, even ones sin: column 3 is the cos of pair 1."),
               Mistake(lambda p: _sinusoid_mistake(3, math.cos),
                       "指数用了列号 3；同一对 sin/cos 共用频率 10000^(-2i/d)，第 3 列属于第 i=1 对，指数是 2/8。",
                       "the exponent used the column number 3; a sin/cos pair shares the frequency 10000^(-2i/d), and "
                       "column 3 belongs to pair i=1, exponent 2/8."),
           )),
    Answer("longest_wavelength", "longest_wavelength", "d=16 时正弦位置编码最长的波长（以位置计）",
           "the longest wavelength (in positions) of the d=16 sinusoidal encoding",
           lambda p: p.sinusoidal_wavelengths(WAVELENGTH_WIDTH)[-1], module="positions",
           mistakes=(
               Mistake(lambda p: 10000.0 ** ((WAVELENGTH_WIDTH - 2) / WAVELENGTH_WIDTH),
                       "漏了 2π：10000^(2i/d) 是角频率的倒数，转一整圈（一个波长）要再乘 2π。",
                       "2*pi is missing: 10000^(2i/d) is one over the angular frequency; a full turn (one "
                       "wavelength) takes 2*pi times that."),
               Mistake(lambda p: 2 * math.pi * 10000.0 ** ((WAVELENGTH_WIDTH - 1) / WAVELENGTH_WIDTH),
                       "指数用了最后一列的列号 d-1；最后一对是 i = d/2 - 1，指数是 2i/d = (d-2)/d。",
                       "the exponent used the last column number d-1; the last pair is i = d/2 - 1, exponent "
                       "2i/d = (d-2)/d."),
               Mistake(lambda p: 2 * math.pi * 10000.0,
                       "2π·10000 是 i = d/2 时才有的波长，而 i 只到 d/2 - 1：最长的波长比它短。",
                       "2*pi*10000 would need i = d/2, but i stops at d/2 - 1: the longest wavelength is shorter."),
           )),
)

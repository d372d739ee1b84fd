"""The answer cells of chapter 2: what each asks, its expected value and the known mistakes its
feedback can name.

The notebook walks through its own small example (a V=4, d=3 table, a 2x3 batch of ids, an
upstream gradient), the ledger of seed 000 (V=32, C=64, d=64), and the scale of the N(0, 0.02^2)
initialisation at d=64, computed and asserted in given cells.  Each graded answer asks for the
same kind of calculation on inputs the walkthrough does not use, so its value is written nowhere
in the student's notebook (tests/test_ch02_embeddings.py proves it).  Expected values are
computed here from the reference, in float64, never typed in; a mistake's value is computed the
way the mistake computes it.
"""

import math

import torch

from autograder.registry import Answer, Mistake

# --- the questions' inputs (the notebook states them in its own words) -----------------

MEAN_TABLE = ((0.3, -1.2), (2.5, 0.4), (-0.7, 1.1), (1.8, -0.6), (-1.5, 2.2))  # V=5, d=2
MEAN_IDS = (4, 1, 4, 2, 0)  # mean_lookup: id 4 twice
GRAD_IDS = ((0, 3, 3), (1, 3, 4))  # repeated_row_grad: V=5, d=2, id 3 three times
GRAD_UPSTREAM = (((0.5, -1.0), (2.0, 0.25), (-1.5, 1.0)), ((1.0, 1.0), (0.75, -2.0), (3.0, 0.5)))
GRAD_VOCAB, REPEATED_ID = 5, 3
ZERO_IDS = ((5, 1, 5, 0), (7, 1, 3, 0))  # zero_grad_rows, V=8
ZERO_VOCAB = 8
LEDGER = dict(V=1200, C=64, d=128)  # embedding_head_params: the course corpus's vocabulary
ROW_NORM_WIDTH = 512  # init_row_norm
COST = dict(B=8, T=64, V=1200, d=128)  # one_hot_macs


def _ids(values):
    return torch.tensor(values, dtype=torch.int64)


def _float(values):
    return torch.tensor(values, dtype=torch.float64)


def _mean_lookup(m, ids=MEAN_IDS):
    return m.embed(_ids(ids), _float(MEAN_TABLE)).mean(dim=0).tolist()


def _table_grad(m):
    return m.embedding_grad(_ids(GRAD_IDS), _float(GRAD_UPSTREAM), GRAD_VOCAB)


def _zero_rows(m):
    upstream = torch.ones(*_ids(ZERO_IDS).shape, 1, dtype=torch.float64)  # any non-zero upstream will do
    grad = m.embedding_grad(_ids(ZERO_IDS), upstream, ZERO_VOCAB)
    return [row for row in range(ZERO_VOCAB) if grad[row].abs().sum().item() == 0]


def _table_sizes(model, V, C, d):
    """(token table, position table, head) as the reference model registers them."""
    lm = model.TransformerLM(model.Config(vocab_size=V, block_size=C, d_model=d, n_heads=1, n_layers=1, d_ff=1,
                                          dropout=0.0))
    return lm.token_embedding.weight.numel(), lm.position_embedding.weight.numel(), lm.head.weight.numel()


def _one_hot_macs(m, B, T, V, d):
    # each of the B*T one-hot rows (length V) multiplies the [V, d] table: V*d multiply-adds per position
    rows = m.one_hot(torch.zeros(B, T, dtype=torch.int64), V)
    return rows.numel() * d


ANSWERS = (
    Answer("mean_lookup", "mean_lookup", "序列 (4, 1, 4, 2, 0) 查表后沿时间求平均的向量",
           "mean over time of the looked-up vectors of the sequence (4, 1, 4, 2, 0)",
           _mean_lookup, module="embeddings",
           mistakes=(
               Mistake(lambda m: _mean_lookup(m, tuple(sorted(set(MEAN_IDS)))),
                       "这是把重复的 id 只算一次的平均；序列里 id 4 出现了两次，它的行要算两次，再除以 T = 5。",
                       "this average counts a repeated id once; id 4 occurs twice in the sequence, so its row counts "
                       "twice, then divide by T = 5."),
               Mistake(lambda m: _float(MEAN_TABLE)[_ids(MEAN_IDS) - 1].mean(dim=0).tolist(),
                       "这是把 id 当成从 1 数起的行号（id i 读了第 i-1 行，id 0 绕到了最后一行）；表的第一行是 id 0。",
                       "this takes the ids as row numbers counted from 1 (id i read row i-1, and id 0 wrapped around to "
                       "the last row); the table's first row is id 0."),
           )),
    Answer("repeated_row_grad", "repeated_row_grad", "id 3 所在行的梯度（重复的 id）",
           "the gradient row of id 3 (a repeated id)",
           lambda m: _table_grad(m)[REPEATED_ID].tolist(), module="embeddings",
           mistakes=(
               Mistake(lambda m: list(GRAD_UPSTREAM[1][1]),
                       "这只是最后一次读到 id 3 的那个位置的上游梯度（覆盖）；id 3 被读了三次，三份上游梯度要相加。",
                       "this is only the upstream row of the last position that read id 3 (an overwrite); id 3 was "
                       "read three times, and the three upstream rows add up."),
               Mistake(lambda m: (_table_grad(m)[REPEATED_ID] / 3).tolist(),
                       "这是三份上游梯度的平均；链式法则给出的是它们的和，不除以出现次数。",
                       "this is the average of the three upstream rows; the chain rule gives their sum, not divided "
                       "by the count."),
           )),
    Answer("zero_grad_rows", "zero_grad_rows", "V = 8 时梯度恰为 0 的行", "the rows whose gradient is exactly 0, V = 8",
           _zero_rows, exact=True, module="embeddings",
           mistakes=(
               Mistake(lambda m: sorted(set(sum(ZERO_IDS, ()))),
                       "这是被读到的行；题目问的是梯度为 0 的行，也就是这一批没有读到的那些。",
                       "these are the rows that were read; the question asks for the rows with a zero gradient, the "
                       "ones this batch did not read."),
               Mistake(lambda m: [row + 1 for row in _zero_rows(m)],
                       "这些行号是从 1 数的；行号和 id 一样从 0 数起。",
                       "these row numbers count from 1; rows are numbered like ids, from 0."),
           )),
    Answer("embedding_head_params", "embedding_head_params", "V=1200, C=64, d=128：词表、位置表与未绑定 head 的参数数",
           "V=1200, C=64, d=128: parameters of the token table, the position table and the untied head",
           lambda model: sum(_table_sizes(model, **LEDGER)), exact=True, module="model",
           mistakes=(
               Mistake(lambda model: sum(_table_sizes(model, **LEDGER)) - LEDGER["V"] * LEDGER["d"],
                       "这是 head 与词嵌入绑定（共用一张表）时的数；本课程的 head 不绑定，它自己还有一张 V×d 的权重。",
                       "this is the count with the head tied to the token table (one shared table); the course's head "
                       "is untied and has its own V x d weight."),
               Mistake(lambda model: sum(_table_sizes(model, **LEDGER)) - LEDGER["C"] * LEDGER["d"],
                       "这个数漏掉了位置表（C·d）：学习式绝对位置嵌入有 C = block_size 行，每行 d 个数。",
                       "this count leaves out the position table (C*d): learned absolute positions have C = block_size "
                       "rows of d numbers."),
           )),
    Answer("init_row_norm", "init_row_norm", "d = 512、N(0, 0.02²) 初始化时一行的均方根范数",
           "the root-mean-square norm of a row at d = 512 under N(0, 0.02^2)",
           lambda m: m.INIT_STD * math.sqrt(ROW_NORM_WIDTH), module="embeddings",
           mistakes=(
               Mistake(lambda m: math.sqrt(m.INIT_STD) * math.sqrt(ROW_NORM_WIDTH),
                       "这是把 0.02 当成方差的结果（标准差成了 √0.02）；N(0, 0.02²) 里 0.02 是标准差。",
                       "this reads 0.02 as the variance (the std becomes sqrt(0.02)); in N(0, 0.02^2) 0.02 is the "
                       "standard deviation."),
               Mistake(lambda m: m.INIT_STD ** 2 * ROW_NORM_WIDTH,
                       "这是范数的平方的期望 d·σ²；题目要的是它的平方根。",
                       "this is the expected squared norm d*sigma^2; the question asks for its square root."),
               Mistake(lambda m: m.INIT_STD * ROW_NORM_WIDTH,
                       "这里用了 σ·d；d 个独立坐标的方差相加，范数随 √d 增长，不是随 d。",
                       "this uses sigma*d; the variances of d independent coordinates add, so the norm grows like "
                       "sqrt(d), not d."),
           )),
    Answer("one_hot_macs", "one_hot_macs", "B=8, T=64, V=1200, d=128：one-hot 乘法的乘加次数",
           "B=8, T=64, V=1200, d=128: multiply-adds of the one-hot product",
           lambda m: _one_hot_macs(m, **COST), exact=True, module="embeddings",
           mistakes=(
               Mistake(lambda m: COST["B"] * COST["T"] * COST["d"],
                       "这是查表要拷贝的数的个数 B·T·d；one-hot 乘法对每个位置都要把长为 V 的 one-hot 行乘上整张 V×d 表。",
                       "this is the number of values the lookup copies, B*T*d; the one-hot product multiplies each "
                       "position's length-V row by the whole V x d table."),
               Mistake(lambda m: COST["B"] * COST["T"] * COST["V"],
                       "这是 one-hot 张量的元素个数 B·T·V；每个元素还要乘上表的一行（d 个数）。",
                       "this is the number of entries of the one-hot tensor, B*T*V; each of them multiplies a row of "
                       "the table (d numbers)."),
           )),
)

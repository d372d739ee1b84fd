"""Visible checks of chapter 3 (learned absolute positions): properties you can test on your
own code in hero_transformer/positions.py.

Each ``judge_*`` function looks at outputs only and returns ``None`` when the property holds,
or a ``(中文, English)`` pair that says what is wrong; its words describe what your code did,
never an expected value.  The ``check_*`` functions run your code on small inputs of their own,
apply the judges and raise ``AssertionError`` with the message.  The autograder applies the
same judges to the outputs of your code on its hidden inputs (one check, two front ends).
"""

import torch

from .checks import TOLERANCE, _passed, _raise_if, show_tracebacks, visible_check  # noqa: F401

RAISED_VALUE_ERROR = "raised ValueError"  # what the probes record when a call raises ValueError


def _close(a, b):
    return a.shape == b.shape and torch.allclose(a.double(), b.double(), **TOLERANCE)


# --- judges ----------------------------------------------------------------------------


def judge_int64(ids):
    if not isinstance(ids, torch.Tensor):
        return (f"位置编号应是张量，实际返回了 {type(ids).__name__}。", f"position ids must be a tensor, got {type(ids).__name__}.")
    if ids.dtype != torch.int64:
        return (f"位置编号的 dtype 是 {ids.dtype}；编号要拿去索引位置表的行，应为整数 torch.int64。",
                f"the position ids have dtype {ids.dtype}; they index rows of the table, so they must be torch.int64.")
    return None


def judge_counts_from_start(ids, start, length):
    """start, start+1, ..., start+length-1: one id per new token, continuing after the cache."""
    if not isinstance(ids, torch.Tensor) or ids.dim() != 1 or ids.numel() != length:
        shape = list(ids.shape) if isinstance(ids, torch.Tensor) else type(ids).__name__
        return (f"应为每个新词元给出一个编号（一维、长度 length），实际得到 {shape}。",
                f"there must be one id per new token (1-D, length `length`); got {shape}.")
    if length and int(ids[0]) != start:
        return (f"第一个编号是 {int(ids[0])}，而它前面缓存里已有 start 个词元：新词元的编号应从 start 接着数"
                "（从 0 数起，不是从 1）。",
                f"the first id is {int(ids[0])}, but start tokens are already cached: new ids continue at start "
                "(counting from 0, not from 1).")
    if length > 1 and not torch.equal(ids[1:] - ids[:-1], torch.ones(length - 1, dtype=ids.dtype, device=ids.device)):
        return ("编号应逐个加 1，没有跳跃，也不应绕回开头。", "the ids must go up by one each, with no jump and no wrap-around.")
    return None


def judge_value_error(outcome):
    """`outcome` is RAISED_VALUE_ERROR, 'raised <type>' or 'no error ...' (what the call did)."""
    if outcome == RAISED_VALUE_ERROR:
        return None
    if isinstance(outcome, str) and outcome.startswith("raised "):
        kind = outcome[len("raised "):]
        return (f"位置表没有的行应当用一个明确的 ValueError 拒绝；你的代码抛出的是 {kind}"
                "（多半是形状不合或索引越界时 PyTorch 自己报的错）。请先检查 start + T 与行数 C。",
                f"rows the table lacks must be refused with a clear ValueError; your code raised {kind} "
                "(most likely PyTorch's own shape or index error). Check start + T against the C rows first.")
    return ("请求了位置表没有的行，你的代码却没有报错：截断到最后一行（clamp）、取模绕回开头或负索引都会"
            "悄悄给出错误的位置。应抛出 ValueError。",
            "the call asked for rows the table does not have, and your code returned without an error: clamping "
            "to the last row, wrapping around (modulo C) or a negative index all give a wrong position silently. "
            "Raise ValueError.")


def judge_same_shape(x, y):
    if not isinstance(y, torch.Tensor):
        return (f"应返回张量，实际返回了 {type(y).__name__}。", f"expected a tensor, got {type(y).__name__}.")
    if y.shape != x.shape:
        return (f"输出形状 {list(y.shape)} 与词向量的形状 {list(x.shape)} 不同：位置向量是**加**上去的，"
                "[B, T, d] 应保持不变（拼接会把宽度变成 2d）。",
                f"the output's shape {list(y.shape)} differs from the token vectors' {list(x.shape)}: positions are "
                "added, so [B, T, d] is kept (concatenating would make the width 2d).")
    return None


def judge_shared_rows(x, y):
    """Every sequence of the batch gets the same position rows: y[b] - x[b] does not depend on b."""
    if not isinstance(y, torch.Tensor) or y.shape != x.shape:
        return None  # judge_same_shape says so
    added = y - x
    if not all(_close(added[b], added[0]) for b in range(1, x.shape[0])):
        return ("批量里不同序列加上的位置向量不一样：位置 t 的向量只取决于 t，对每条序列都相同。"
                "检查广播：[T, d] 的位置行应沿批量轴 B 广播，而不是每条序列取一行。",
                "different sequences of the batch received different position vectors: the vector of position t "
                "depends on t alone, the same for every sequence. Check the broadcast: the [T, d] rows broadcast "
                "over the batch axis B, not one row per sequence.")
    return None


def judge_continuation(whole, pieces):
    """The first k tokens with start=0 and the rest with start=k give what the whole sequence gets."""
    if not (isinstance(whole, torch.Tensor) and isinstance(pieces, torch.Tensor)) or not _close(whole, pieces):
        return ("先加前 k 个词元（start=0）、再加其余词元（start=k），结果应与一次加整条序列相同；"
                "你的结果不同。多半是忽略了 start，第二段又从第 0 行取起。",
                "adding the first k tokens (start=0) and then the rest (start=k) must give what the whole sequence "
                "gets at once; yours differs. Most likely start is ignored and the second piece reads rows from 0 "
                "again.")
    return None


def judge_ascending_ints(rows):
    if not isinstance(rows, list) or not all(type(r) is int for r in rows):
        kind = type(rows).__name__ if not isinstance(rows, list) else "list with non-int items"
        return (f"应返回由 Python 整数组成的 list，实际返回了 {kind}。",
                f"expected a list of Python ints, got a {kind}.")
    if any(a >= b for a, b in zip(rows, rows[1:])):
        return ("行号应严格升序、不重复。", "the row numbers must be strictly ascending, without repeats.")
    return None


def judge_untrained(rows, lengths, block_size):
    """Exactly the rows of the table that no sequence reads, each sequence read from position 0."""
    if judge_ascending_ints(rows) is not None:
        return None  # judge_ascending_ints says so
    read = set()
    for length in lengths:
        read.update(range(min(length, block_size)))
    if any(r < 0 or r >= block_size for r in rows):
        return ("有的行号不在 0 到 C-1 之间：位置表只有这些行。", "some row numbers are outside 0 .. C-1: the table has no others.")
    if read & set(rows):
        return ("列出的行里有训练序列读到过的行：长度为 L 的序列从位置 0 读起，读到第 0 到 L-1 行。",
                "some listed rows are read by a training sequence: a sequence of length L, read from position 0, "
                "reads rows 0 to L-1.")
    if set(range(block_size)) - read - set(rows):
        return ("漏掉了一些没有任何序列读到的行：要看最长的那条序列，它之后的行都没有梯度。",
                "some rows no sequence reads are missing: look at the longest sequence; every row after it gets no "
                "gradient.")
    return None


# --- checks you run in the notebook --------------------------------------------------------


def _positions():
    from . import positions

    return positions


def outcome_of(call):
    """(value, what the call did in the probes' words): the value it returned and 'no error', or None and
    'raised <type>'.  A stub's NotImplementedError goes on to the check's decorator."""
    try:
        value = call()
    except NotImplementedError:
        raise
    except ValueError:
        return None, RAISED_VALUE_ERROR
    except Exception as exc:  # the wrong kind of error is judged, not propagated
        return None, f"raised {type(exc).__name__}"
    return value, "no error"


def judge_no_error(outcome):
    """A call that stays inside the table (start + T <= C) must not raise."""
    if outcome.startswith("raised "):
        kind = outcome[len("raised "):]
        return (f"这次调用没有超出位置表（start + T <= C，最后用到的行不超过 C-1），不应报错；你的代码抛出了 {kind}。"
                "若只在 start + T 恰好等于 C 时报错，检查边界条件：应是 start + T > C 才报错，不是 >=。",
                f"this call stays inside the table (start + T <= C, the last row used is at most C-1), so no error "
                f"is due; your code raised {kind}. If it fails only when start + T equals C, check the bound: raise "
                "when start + T > C, not >=.")
    return None


@visible_check("position_ids", module="positions", target="position_ids")
def check_position_ids():
    positions = _positions()
    ids, outcome = outcome_of(lambda: positions.position_ids(3, 5))
    _raise_if(judge_no_error(outcome))
    _raise_if(judge_int64(ids))
    _raise_if(judge_counts_from_start(ids, 0, 3))
    ids, outcome = outcome_of(lambda: positions.position_ids(2, 6, start=4))  # the last two rows: allowed
    _raise_if(judge_no_error(outcome))
    _raise_if(judge_int64(ids))
    _raise_if(judge_counts_from_start(ids, 4, 2))
    for call in (lambda: positions.position_ids(3, 5, start=3), lambda: positions.position_ids(6, 5),
                 lambda: positions.position_ids(2, 4, start=-1)):
        _raise_if(judge_value_error(outcome_of(call)[1]))
    # the caller owns what it gets back: changing one result changes no later call's ids
    first = positions.position_ids(3, 5)
    first += 100
    _raise_if(judge_counts_from_start(positions.position_ids(3, 5), 0, 3) and (
        "改动上一次调用返回的编号（ids += 100）之后，再调用一次得到的编号也变了：返回的是函数之外保存的一张表"
        "（或它的切片），每次调用都应返回新建的张量。",
        "after the ids returned by one call were changed (ids += 100), the next call's ids changed too: the "
        "result is a table kept outside the function (or a slice of it); return a new tensor from every call."))
    _passed("position_ids：int64、从 start 接着数、用到最后一行也可以，超出 C 或为负时 ValueError")


@visible_check("add_positions", module="positions", target="add_positions")
def check_add_positions():
    positions = _positions()
    gen = torch.Generator().manual_seed(3)
    x, table = torch.randn(2, 3, 4, generator=gen), torch.randn(5, 4, generator=gen)
    y, outcome = outcome_of(lambda: positions.add_positions(x, table))
    _raise_if(judge_no_error(outcome))
    _raise_if(judge_same_shape(x, y))
    _raise_if(judge_shared_rows(x, y))
    pieces = torch.cat([positions.add_positions(x[:, :1], table), positions.add_positions(x[:, 1:], table, start=1)],
                       dim=1)
    _raise_if(judge_continuation(y, pieces))
    edge, outcome = outcome_of(lambda: positions.add_positions(x[:, :2], table, start=3))  # rows 3 and 4 of 5
    _raise_if(judge_no_error(outcome))
    _raise_if(judge_same_shape(x[:, :2], edge))
    _raise_if(judge_value_error(outcome_of(lambda: positions.add_positions(torch.zeros(2, 6, 4), table))[1]))
    _raise_if(judge_value_error(outcome_of(lambda: positions.add_positions(x, table, start=3))[1]))
    # the table is learned: a sum of the output sends a gradient of 2 (the batch) to each row read, 0 to the rest
    learned = table.clone().requires_grad_(True)
    out = positions.add_positions(x, learned, start=1)
    if isinstance(out, torch.Tensor) and out.requires_grad:
        out.sum().backward()
    expected = torch.zeros(5, 4)
    expected[1:4] = 2.0
    if learned.grad is None or not torch.allclose(learned.grad, expected):
        raise AssertionError("位置表没有得到应有的梯度（读到的行每行应为 2，其余为 0）：它是学出来的参数，加法要留在计算图里"
                             "（不要 .detach()、.data 或 torch.no_grad()）。\n"
                             "(the table did not get its gradient (2 in each row read, 0 elsewhere): it is a learned "
                             "parameter, so the addition stays in the graph (no .detach(), .data or torch.no_grad()).)")
    _passed("add_positions：形状 [2,3,4] 保持、批量共用同一组位置行、start 接续一致，超出 C 行时 ValueError")


@visible_check("untrained_positions", module="positions", target="untrained_positions")
def check_untrained_positions():
    positions = _positions()
    for lengths, block_size in (([2, 4, 3], 7), ([7, 5], 7)):
        given = list(lengths)
        rows = positions.untrained_positions(lengths, block_size)
        _raise_if(judge_ascending_ints(rows))
        _raise_if(judge_untrained(rows, given, block_size))
        if lengths != given:
            raise AssertionError(f"untrained_positions 改动了传入的 lengths（{given} 变成了 {lengths}）：练习函数只读它的参数。\n"
                                 f"(untrained_positions changed the lengths it was given ({given} became {lengths}): an "
                                 "exercise only reads its arguments.)")
    _passed("untrained_positions：升序的整数列表，恰好是没有训练序列读到的那些行")

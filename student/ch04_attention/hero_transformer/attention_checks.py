"""Visible checks of chapter 4 (causal multi-head attention with a KV cache): properties you
can test on your own code.

As in checks.py, each ``judge_*`` function looks at outputs only and returns ``None`` when the
property holds, or a ``(中文, English)`` pair that says what is wrong; the ``check_*``
functions run your code on small inputs and raise ``AssertionError`` with the Chinese message.
The autograder applies the same judges to the outputs of your code in its own process.
"""

import math

import torch

from .checks import (TOLERANCE, Counted, _passed, _raise_if, judge_causal, judge_same_shape,  # noqa: F401
                     show_tracebacks, standing_in, visible_check)

MODULE = "model"


def _close(a, b):
    return isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.shape == b.shape and \
        torch.allclose(a.double(), b.double(), **TOLERANCE)


def _tensor_problem(value):
    if not isinstance(value, torch.Tensor):
        return (f"应返回张量，实际返回了 {type(value).__name__}。", f"expected a tensor, got {type(value).__name__}.")
    return None


# --- judges --------------------------------------------------------------------------


def judge_scores_shape(q, k, scores):
    """[..., T_q, d_h] and [..., T_k, d_h] give [..., T_q, T_k]: one row per query, one column per key."""
    problem = _tensor_problem(scores)
    if problem:
        return problem
    expected = tuple(q.shape[:-1]) + (k.shape[-2],)
    if tuple(scores.shape) != expected:
        return (
            f"分数形状 {tuple(scores.shape)} 不对：q 为 {tuple(q.shape)}、k 为 {tuple(k.shape)} 时应为 [..., T_q, T_k]，"
            "每个查询一行、每个键一列（是不是算成了 K·Qᵀ，或转置了别的轴？）。",
            f"the scores' shape {tuple(scores.shape)} is wrong: for q {tuple(q.shape)} and k {tuple(k.shape)} it is "
            "[..., T_q, T_k], one row per query and one column per key (K Q^T instead of Q K^T, or another axis "
            "transposed?).",
        )
    return None


def judge_scores_scaling(scores, scores_doubled):
    """Writing every feature of q and k twice doubles q.k and d_h, so q.k/sqrt(d_h) grows by sqrt(2)."""
    if not _close(scores_doubled, math.sqrt(2.0) * scores):
        return (
            "把 q、k 的每个特征都重复一遍（d_h 翻倍，点积也翻倍）后，分数应恰好变为原来的 √2 倍。"
            "变成 2 倍说明没有缩放，不变说明除的是 d_h 而不是 √d_h。",
            "with every feature of q and k written twice (d_h and the dot product both double) the scores must "
            "grow by exactly sqrt(2); a factor 2 means no scaling, a factor 1 means dividing by d_h instead of "
            "sqrt(d_h).",
        )
    return None


def judge_rows_sum_to_one(weights):
    problem = _tensor_problem(weights)
    if problem:
        return problem
    sums = weights.double().sum(dim=-1)
    if not (torch.isfinite(sums).all() and torch.allclose(sums, torch.ones_like(sums), **TOLERANCE)) \
            or (weights < 0).any():
        return (
            "softmax 的每一行（最后一根轴）应是非负且和为 1 的权重。检查是不是沿错了轴（dim=-2），"
            "或者除以了最大值而不是总和。",
            "every row (the last axis) of a softmax must be non-negative weights summing to 1: check the axis "
            "(dim=-2?) and that you divide by the sum, not the maximum.",
        )
    return None


def judge_finite(weights):
    problem = _tensor_problem(weights)
    if problem:
        return problem
    if not torch.isfinite(weights).all():
        return (
            "分数很大（或很小）时结果出现了 NaN/inf：float32 的 exp(100) 已经溢出为 inf，inf/inf 就是 NaN；"
            "全是很负的分数时 exp 全部下溢为 0，0/0 也是 NaN。先减去每一行自己的最大值再取 exp。",
            "large (or very negative) scores gave NaN/inf: in float32 exp(100) already overflows to inf and "
            "inf/inf is NaN; a row of very negative scores underflows to 0/0. Subtract each row's own maximum "
            "before exp.",
        )
    return None


def judge_shift_invariant(weights, weights_shifted):
    """softmax(s + c) = softmax(s) for a constant c added to a whole row."""
    if not _close(weights, weights_shifted):
        return (
            "给一行的所有分数加同一个常数，softmax 不应改变（分子分母同乘 e^c）。"
            "若只在分子里减了最大值、分母却用原始分数，就会破坏这一点。",
            "adding one constant to a whole row of scores must not change the softmax (numerator and denominator "
            "both gain e^c); subtracting the maximum in the numerator only breaks this.",
        )
    return None


def judge_masked_zero(scores, weights):
    """A -inf score gets weight exactly 0."""
    masked = torch.isinf(scores) & (scores < 0)
    if not isinstance(weights, torch.Tensor) or weights.shape != scores.shape or not (weights[masked] == 0).all():
        return (
            "分数为 -inf 的位置，softmax 权重应恰好为 0（e^(-inf) = 0）。",
            "a score of -inf must get weight exactly 0 (e^-inf = 0).",
        )
    return None


def judge_split(x, heads, out):
    """[B, T, d] -> [B, h, T, d_h]; head j holds features j*d_h .. (j+1)*d_h - 1 of every position."""
    problem = _tensor_problem(out)
    if problem:
        return problem
    batch, length, features = x.shape
    head_dim = features // heads
    shape = tuple(out.shape)
    if shape != (batch, heads, length, head_dim):
        # say what was seen; name the axis order only when the axes are the right ones in another order
        if shape == (batch, length, heads, head_dim) and heads != length:
            return (f"拆头后的形状是 {shape}，即 [B, T, h, d_h]：头轴还在时间轴之后，要换到它前面（[B, h, T, d_h]）。",
                    f"the split shape is {shape}, that is [B, T, h, d_h]: the head axis is still after time; it goes "
                    "before it ([B, h, T, d_h]).")
        if len(shape) == 4 and shape[1] != heads:
            return (f"拆头后的形状是 {shape}：第 1 根轴有 {shape[1]} 个头，而模型的头数 n_heads 是 {heads}。",
                    f"the split shape is {shape}: axis 1 holds {shape[1]} heads, while the model's n_heads is {heads}.")
        return (f"拆头后的形状 {shape} 不是 [B, h, T, d_h]。", f"the split shape {shape} is not [B, h, T, d_h].")
    for j in range(heads):
        if not torch.equal(out[:, j], x[..., j * head_dim:(j + 1) * head_dim]):
            return (
                f"第 {j} 个头的内容不对：它应在每个位置上恰好持有特征 {j * head_dim}..{(j + 1) * head_dim - 1}。"
                "直接 view 成 [B, h, T, d_h] 而不转置，会把不同位置的特征混进同一行。",
                f"head {j} holds the wrong values: at every position it holds exactly features "
                f"{j * head_dim}..{(j + 1) * head_dim - 1}. Viewing straight to [B, h, T, d_h] without a transpose "
                "mixes positions.",
            )
    return None


def judge_merge(split, out):
    """[B, h, T, d_h] -> [B, T, d], undoing the split: position t, features j*d_h.. come from head j."""
    problem = _tensor_problem(out)
    if problem:
        return problem
    batch, heads, length, head_dim = split.shape
    if tuple(out.shape) != (batch, length, heads * head_dim):
        return (
            f"合并后的形状 {tuple(out.shape)} 不对：应为 [B, T, d]，d = h·d_h，各头在特征轴上拼接。",
            f"the merged shape {tuple(out.shape)} is wrong: it is [B, T, d] with d = h*d_h, the heads "
            "concatenated along the feature axis.",
        )
    for j in range(heads):
        if not torch.equal(out[..., j * head_dim:(j + 1) * head_dim], split[:, j]):
            return (
                "合并没有还原拆分：位置 t 的特征 j·d_h 起的一段应来自第 j 个头的第 t 行。"
                "先把头轴换回时间轴之后（transpose(1, 2)），再 reshape。",
                "the merge does not undo the split: features j*d_h.. of position t come from row t of head j. "
                "Move the head axis back after time (transpose(1, 2)) before reshaping.",
            )
    return None


def judge_incremental(full, incremental):
    """Feeding the sequence in pieces through the cache gives the full forward's outputs."""
    if not _close(full, incremental):
        return (
            "用 KV cache 分段（或逐个词元）计算的输出，应与一次算完整个序列的输出一致。"
            "检查：past 沿时间轴（dim=2）拼接；present 含过去和新的键值；掩码取 causal_mask 的第 "
            "total-T 到 total-1 行（而不是左上角）。",
            "the outputs computed in pieces through the KV cache must equal the full forward's. Check: past is "
            "concatenated on the time axis (dim=2); present holds the past and the new keys and values; the mask "
            "reads rows total-T .. total-1 of causal_mask (not its top-left corner).",
        )
    return None


def judge_present(present, use_cache, batch=None, heads=None, total=None, head_dim=None):
    """present is None without use_cache, else (keys, values), each [B, h, T_past + T, d_h]."""
    if not use_cache:
        if present is not None:
            return ("use_cache=False 时 present 应为 None。", "present must be None when use_cache is False.")
        return None
    shape = (batch, heads, total, head_dim)
    if not (isinstance(present, (tuple, list)) and len(present) == 2
            and all(isinstance(t, torch.Tensor) and tuple(t.shape) == shape for t in present)):
        return (
            f"use_cache=True 时 present 应为 (keys, values)，各为 [B, h, T_past + T, d_h] = {list(shape)}："
            "它要包含过去的键值和这次新算的键值。",
            f"with use_cache=True present is (keys, values), each [B, h, T_past + T, d_h] = {list(shape)}: it holds "
            "the past keys and values and the new ones.",
        )
    return None


# --- checks you run in the notebook ------------------------------------------------------


def _model():
    from hero_transformer import model

    return model


# the walkthrough's hand example: 3 tokens, one head, d_h = 4
HAND_Q = [[1.0, 0.0, 1.0, 0.0], [0.0, 2.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0]]
HAND_K = [[2.0, 0.0, 0.0, 0.0], [0.0, 1.0, 1.0, 0.0], [1.0, 0.0, 1.0, 2.0]]
HAND_SCORES = [[1.0, 0.5, 1.0], [0.0, 1.0, 0.0], [1.0, 1.0, 2.0]]


@visible_check("attention_scores", module=MODULE, target="attention_scores")
def check_attention_scores():
    model = _model()
    scores = model.attention_scores(torch.tensor(HAND_Q), torch.tensor(HAND_K))
    _raise_if(judge_scores_shape(torch.zeros(3, 4), torch.zeros(3, 4), scores))
    if not _close(scores, torch.tensor(HAND_SCORES)):
        raise AssertionError("手算例子（Q、K 见讲解，d_h = 4）的分数与讲解里的矩阵不一致。\n"
                             "(the hand example's scores differ from the walkthrough's matrix.)")
    torch.manual_seed(0)
    q, k = torch.randn(2, 2, 3, 4), torch.randn(2, 2, 5, 4)
    scores = model.attention_scores(q, k)
    _raise_if(judge_scores_shape(q, k, scores))
    _raise_if(judge_scores_scaling(scores, model.attention_scores(torch.cat([q, q], -1), torch.cat([k, k], -1))))
    _passed("attention_scores：手算例子、形状 [B,h,T_q,T_k]、缩放 1/√d_h")


@visible_check("stable_softmax", module=MODULE, target="stable_softmax")
def check_stable_softmax():
    model = _model()
    torch.manual_seed(0)
    scores = 3 * torch.randn(2, 2, 3, 5)
    weights = model.stable_softmax(scores)
    _raise_if(judge_same_shape(scores, weights))
    _raise_if(judge_rows_sum_to_one(weights))
    _raise_if(judge_shift_invariant(weights, model.stable_softmax(scores + 20.0)))
    masked = torch.randn(3, 3).masked_fill(~torch.ones(3, 3, dtype=torch.bool).tril(), float("-inf"))
    _raise_if(judge_masked_zero(masked, model.stable_softmax(masked)))
    large = torch.tensor([[100.0, 101.0, 102.0], [-500.0, -501.0, -502.0]])
    _raise_if(judge_finite(model.stable_softmax(large)))
    _raise_if(judge_rows_sum_to_one(model.stable_softmax(large)))
    _passed("stable_softmax：每行和为 1、平移不变、-inf 得 0、大分数不溢出")


@visible_check("split_heads", module=MODULE, target="CausalSelfAttention.split_heads")
def check_split_heads():
    model = _model()
    attention = model.CausalSelfAttention(model.Config(10, 6, 4, 2, 1, 8, 0.0))
    x = torch.arange(24, dtype=torch.float32).reshape(2, 3, 4)  # T = 3 != d = 4
    _raise_if(judge_split(x, 2, attention.split_heads(x)))
    _passed("split_heads：[2,3,4] -> [2,2,3,2]，每个头持有自己那一段特征")


@visible_check("merge_heads", module=MODULE, target="CausalSelfAttention.merge_heads")
def check_merge_heads():
    model = _model()
    attention = model.CausalSelfAttention(model.Config(10, 6, 6, 3, 1, 8, 0.0))
    # split heads made with torch alone, so this check does not need your split_heads
    split = torch.arange(30, dtype=torch.float32).reshape(1, 5, 3, 2).transpose(1, 2)
    _raise_if(judge_merge(split, attention.merge_heads(split)))
    _passed("merge_heads：[1,3,5,2] -> [1,5,6]，还原了拆分")


# --- the attention check's doubles: the chapter's other four exercises, and dropout ----------
# Each is a fixed function with the property the forward relies on, and none is the exercise it
# stands in for: the check exercises your forward's wiring, whatever state the other four are in.


def distance_scores(q, k):
    """attention_scores' double: minus half the squared distance of each query to each key."""
    return -0.5 * ((q.unsqueeze(-2) - k.unsqueeze(-3)) ** 2).sum(dim=-1)


def cooled_softmax(scores):
    """stable_softmax's double: a softmax at temperature 3 (rows sum to 1, -inf gets 0)."""
    weights = torch.exp((scores - scores.amax(dim=-1, keepdim=True)) / 3.0)
    return weights / weights.sum(dim=-1, keepdim=True)


def strided_split(heads):
    """split_heads' double: head j holds features j, j + h, j + 2h, ... (not split_heads' blocks)."""
    def split(t):
        batch, length, width = t.shape
        return t.reshape(batch, length, width // heads, heads).permute(0, 3, 1, 2)
    return split


def strided_merge(t):
    """merge_heads' double: undoes strided_split."""
    batch, heads, length, head_dim = t.shape
    return t.permute(0, 2, 3, 1).reshape(batch, length, head_dim * heads)


def _attention_with_doubles(model, cfg):
    attention = model.CausalSelfAttention(cfg).eval()
    attention.split_heads, attention.merge_heads = strided_split(cfg.n_heads), strided_merge
    attention.attn_dropout = Counted(lambda weights: weights * weights)  # visible where it acts
    return attention


def judge_uniform_average(x, out, proj):
    """All scores equal: position t averages the values of positions 0..t; with the squaring dropout
    double the weights are 1/(t+1)^2, so out_t = proj(sum_{s<=t} v_s / (t+1)^2)."""
    counts = torch.arange(1, x.shape[1] + 1, dtype=x.dtype)[:, None]
    expected = (x.cumsum(dim=1) / counts ** 2) @ proj.transpose(0, 1)
    if not _close(out, expected):
        return ("把 q、k 的投影置 0（所有分数相同）、v 的投影取单位阵、attn_dropout 换成逐元素平方的替身后，位置 t 的输出"
                "应是 proj(Σ_{s≤t} v_s / (t+1)²)：掩码只许看自己和过去（用了缓存时取 causal_mask 的第 total-T 到 "
                "total-1 行），dropout 只作用在 softmax 之后的权重上，再乘 v、合并各头、经过 self.proj。",
                "with the q and k projections zero (all scores equal), the v projection the identity and "
                "attn_dropout a double that squares, position t must output proj(sum_{s<=t} v_s / (t+1)^2): the "
                "mask lets a position see itself and the past only (rows total-T .. total-1 of causal_mask with a "
                "cache), dropout acts on the weights after the softmax, then multiply by v, merge the heads and "
                "apply self.proj.")
    return None


@visible_check("attention", module=MODULE, target="CausalSelfAttention.forward")
def check_attention():
    model = _model()
    cfg = model.Config(10, 6, 4, 2, 1, 8, 0.0)
    torch.manual_seed(0)
    x = torch.randn(2, 3, 4)
    changed = x.clone()
    changed[:, 2] = torch.randn(2, 4)
    with torch.no_grad(), standing_in(model, attention_scores=distance_scores, stable_softmax=cooled_softmax):
        attention = _attention_with_doubles(model, cfg)
        full, present = attention(x)
        _raise_if(judge_same_shape(x, full))
        _raise_if(judge_present(present, False))
        _raise_if(judge_causal(full, attention(changed)[0], 2))
        outputs, cache = [], None
        for t in range(3):
            out, cache = attention(x[:, t:t + 1], cache, True)
            _raise_if(judge_present(cache, True, 2, 2, t + 1, 2))
            outputs.append(out)
        _raise_if(judge_incremental(full, torch.cat(outputs, dim=1)))
        attention = _attention_with_doubles(model, cfg)
        attention.qkv.weight.zero_()
        attention.qkv.weight[8:].copy_(torch.eye(4))  # q = k = 0, v = x
        attention.proj.weight.copy_(torch.tensor([[0., 2., 0., 0.], [0., 0., 3., 0.], [0., 0., 0., 1.], [-1., 0., 0., 0.]]))
        long = torch.randn(2, 5, 4)
        _raise_if(judge_uniform_average(long, attention(long)[0], attention.proj.weight))
        head, past = attention(long[:, :3], None, True)  # two new positions after three cached
        tail, _ = attention(long[:, 3:], past, True)
        _raise_if(judge_uniform_average(long, torch.cat([head, tail], dim=1), attention.proj.weight))
    _passed("CausalSelfAttention：形状 [2,3,4]、因果、逐词元 KV cache 与整段前向一致、present 形状；所有分数相同时"
            "恰为可见位置的平均（本章另外四个练习与 dropout 用的是替身）")

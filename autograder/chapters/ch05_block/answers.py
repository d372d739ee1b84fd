"""The answer cells of chapter 5: what each asks, its expected value and the known mistakes
its feedback can name.

The notebook walks through the seed's own numbers (x = (1, 3), 0.99999, ±0.7071, the block
output (0.9206722, 3.4206696), a/2, the shape table, 49,728, 107,776, 424), computed and
asserted in given cells.  Each graded answer asks for the same calculation on inputs the
walkthrough does not use, so its value is written nowhere in the student's notebook
(tests/test_answers.py proves it).  Expected values are computed here from the reference, in
float64, never typed in; a mistake's value is computed the way the mistake computes it.
"""

import torch

from autograder.registry import Answer, Mistake

# --- the questions' inputs (the notebook states them in its own words) -----------------

FLAT_VECTOR = (0.0, 0.006)  # normalised_variance: v is about eps, so v/(v+eps) is far from 1
SKEWED_VECTOR = (1.0, 2.0, 6.0)  # sample_variance_output: the d-1 mistake on d = 3
NEAR_CONSTANT = (5.0, 5.0, 5.003)  # near_constant_output: eps dominates the variance
RESIDUAL_INPUT = (0.0, 1.0, 5.0)  # residual_output: d = f = 3, W1 = I, W2 = I/2, zero biases
GAP_INPUT = (1.0, 1.004)  # increment_gap: d = f = 2, W2 = I/2
SHAPES = dict(B=3, T=5, d=8, h=4, f=32)  # shape_drill
BLOCK = dict(d=48, f=192)  # per_block_params
MODEL = dict(V=50, C=32, N=3, d=48, f=192)  # total_params
SMALL = dict(V=9, C=7, N=3, d=6, f=10)  # small_total_params

def _vector(values):
    return torch.tensor(values, dtype=torch.float64)

def _normalise(model, values, divisor=None, eps=None, inside=True):
    """Standardised coordinates of one position; the keyword arguments make the mistakes."""
    x = _vector(values)
    centered = x - x.mean()
    variance = centered.pow(2).sum() / (divisor or len(values))
    eps = model.EPS if eps is None else eps
    return centered / (torch.sqrt(variance + eps) if inside else torch.sqrt(variance) + eps)

def _layer_norm(model, values):
    """The reference LayerNorm (gamma 1, beta 0) on one position, in float64."""
    with torch.no_grad():
        return model.LayerNorm(len(values)).double()(_vector(values))

def _population_variance(z):
    return (z - z.mean()).pow(2).mean().item()

def _residual(model, values, activation=None, residual=True, **mistake):
    z = _layer_norm(model, values) if not mistake else _normalise(model, values, **mistake)
    increment = 0.5 * (activation or model.gelu)(z)
    return ((_vector(values) if residual else 0) + increment).tolist()

def _gap(model, **mistake):
    z = _layer_norm(model, GAP_INPUT) if not mistake else _normalise(model, GAP_INPUT, **mistake)
    increment = 0.5 * model.gelu(z)
    return (increment[1] - increment[0]).item()

def _shape_table(B, T, d, h, f, heads_last=False):
    per_head = [B, T, h, d // h] if heads_last else [B, h, T, d // h]
    return {"layer_norm": [B, T, d], "per_head_q": per_head, "attention_weights": [B, h, T, T],
            "heads_merged": [B, T, d], "ffn_hidden": [B, T, f], "block_output": [B, T, d]}

def _registered(module):
    return sum(p.numel() for p in module.parameters())

def _block_count(model, d, f):
    cfg = model.Config(vocab_size=1, block_size=1, d_model=d, n_heads=1, n_layers=1, d_ff=f, dropout=0.0)
    return _registered(model.TransformerBlock(cfg))

def _model_count(model, V, C, N, d, f):
    return _registered(model.TransformerLM(model.Config(V, C, d, 1, N, f, 0.0)))

# the ledger's mistakes, as differences from the right count (each a fault of faults.py too)
def _ledger_mistakes(V, C, N, d, f):
    return (
        Mistake(lambda m: _model_count(m, V, C, N, d, f) - V * d,
                "这是把 head 与嵌入绑定时的数（只计一次 Vd）；本模型的 head 不绑定，请重查“嵌入与 head”两项。",
                "this is the tied-head count (Vd once); this model's head is untied: recheck the embedding and head "
                "terms."),
        Mistake(lambda m: _model_count(m, V, C, N, d, f) - 2 * d,
                "这个数漏掉了最后的 LayerNorm（2d）；请重查块之后、head 之前的那一层。",
                "this count leaves out the final LayerNorm (2d): recheck the layer after the last block, before the "
                "head."),
        Mistake(lambda m: _model_count(m, V, C, N, d, f) - C * d,
                "这个数漏掉了位置表（C·d）；学习式位置嵌入有 block_size 行，请重查这一项。",
                "this count leaves out the position table (C*d); learned positions have block_size rows: recheck "
                "that term."),
        Mistake(lambda m: _model_count(m, V, C, N, d, f) - N * 2 * d,
                "每块两套 LayerNorm 计成了 2d；gamma 和 beta 各 d、共两套，应为 4d。请重查每块的归一化参数。",
                "each block's two LayerNorms were counted as 2d; gamma and beta of width d, twice, make 4d: recheck "
                "the per-block norms."),
        Mistake(lambda m: _model_count(m, V, C, N, d, f) - N * (f + d),
                "这个数漏掉了 FFN 的两个偏置（每块 f + d）；请重查前馈网络那一项。",
                "this count leaves out the FFN biases (f + d per block): recheck the feed-forward term."),
    )

D_MINUS_ONE = ("这是分母用 d-1（样本方差）的结果；LayerNorm 用人口方差，除以 d。请重查方差那一步。",
               "this is the d-1 (sample variance) result; LayerNorm divides by d: recheck the variance step.")
NO_EPS = ("这是去掉 eps 的结果；eps 在平方根里面，方差很小时它决定结果。请重查分母 sqrt(v + eps)。",
          "this is the result without eps; eps sits inside the square root and dominates a small variance: recheck "
          "the denominator sqrt(v + eps).")

ANSWERS = (
    Answer("normalised_variance", "normalised_variance", "x = (0, 0.006) 标准化后的人口方差",
           "population variance of x = (0, 0.006) after normalising",
           lambda m: _population_variance(_layer_norm(m, FLAT_VECTOR)),
           mistakes=(
               Mistake(lambda m: 1.0, "标准化后的方差不是严格的 1，而是 v/(v+eps)；这里 v 与 eps 同一量级。请重算 v 再代入。",
                       "the normalised variance is not exactly 1 but v/(v+eps), and here v is of the order of eps: "
                       "recompute v and substitute."),
               Mistake(lambda m: _population_variance(_normalise(m, FLAT_VECTOR, divisor=1)), *D_MINUS_ONE),
               Mistake(lambda m: _population_variance(_normalise(m, FLAT_VECTOR, inside=False)),
                       "这是把 eps 放在平方根外面（sqrt(v) + eps）的结果；请重查分母。",
                       "this puts eps outside the square root (sqrt(v) + eps): recheck the denominator."),
           )),
    Answer("sample_variance_output", "sample_variance_output", "x = (1, 2, 6) 误用 d-1 时的标准化结果",
           "normalised values of x = (1, 2, 6) with the d-1 mistake",
           lambda m: _normalise(m, SKEWED_VECTOR, divisor=len(SKEWED_VECTOR) - 1).tolist(),
           mistakes=(
               Mistake(lambda m: _layer_norm(m, SKEWED_VECTOR).tolist(),
                       "这是正确的（除以 d）结果；这一题要的是误用 d-1 作分母时的结果。",
                       "this is the correct (divide by d) result; the question asks for the result of the d-1 "
                       "mistake."),
           )),
    Answer("near_constant_output", "near_constant_output", "近似常量向量 (5, 5, 5.003) 的 LayerNorm 输出",
           "LayerNorm output of the near-constant vector (5, 5, 5.003)",
           lambda m: _layer_norm(m, NEAR_CONSTANT).tolist(),
           mistakes=(Mistake(lambda m: _normalise(m, NEAR_CONSTANT, eps=0.0).tolist(), *NO_EPS),
                     Mistake(lambda m: _normalise(m, NEAR_CONSTANT, divisor=2).tolist(), *D_MINUS_ONE))),
    Answer("residual_output", "residual_output", "算例：x = (0, 1, 5) 的 pre-LN 前馈残差输出",
           "worked example: output of the pre-LN feed-forward residual for x = (0, 1, 5)",
           lambda m: _residual(m, RESIDUAL_INPUT),
           mistakes=(
               Mistake(lambda m: _residual(m, RESIDUAL_INPUT, residual=False),
                       "这只是前馈增量，还没有加回输入 x（残差）；请重查最后一步。",
                       "this is the feed-forward increment alone, without adding x back (the residual): recheck the "
                       "last step."),
               Mistake(lambda m: _residual(m, RESIDUAL_INPUT, activation=torch.relu),
                       "这里用的是 ReLU；本课程用精确 GELU u·Φ(u)，负输入给出小的负值。请重查激活那一步。",
                       "this uses ReLU; the course uses the exact GELU u*Phi(u), which gives small negative values "
                       "for negative inputs: recheck the activation step."),
               Mistake(lambda m: _residual(m, RESIDUAL_INPUT, divisor=2), *D_MINUS_ONE),
           )),
    Answer("increment_gap", "increment_gap", "x = (1, 1.004) 时增量两坐标之差",
           "difference of the two increment coordinates for x = (1, 1.004)",
           lambda m: _gap(m),
           mistakes=(Mistake(lambda m: _gap(m, eps=0.0), *NO_EPS),
                     Mistake(lambda m: 2 * _gap(m), "这个差没有乘 W2 = I/2 的那个 1/2；请重查第二个线性层。",
                             "this gap misses the 1/2 of W2 = I/2: recheck the second linear layer."))),
    Answer("shape_drill", "shape_drill", "形状演练 B=3, T=5, d=8, h=4, f=32", "shape drill B=3, T=5, d=8, h=4, f=32",
           lambda m: _shape_table(**SHAPES), exact=True,
           mistakes=(Mistake(lambda m: _shape_table(**SHAPES, heads_last=True),
                             "每头的 Q 把头轴留在了时间轴之后；注意力按头并行，头轴要换到时间轴前面：[B, h, T, d_h]。",
                             "the per-head Q keeps the head axis after time; attention runs per head, so the head "
                             "axis moves before time: [B, h, T, d_h]."),)),
    Answer("per_block_params", "per_block_params", "每块参数数（d=48, f=192）", "parameters per block (d=48, f=192)",
           lambda m: _block_count(m, **BLOCK), exact=True,
           mistakes=(
               Mistake(lambda m: _block_count(m, **BLOCK) - 2 * BLOCK["d"],
                       "两套 LayerNorm 计成了 2d；每套 gamma、beta 各 d，共 4d。请重查归一化那一项。",
                       "the two LayerNorms were counted as 2d; each has gamma and beta of width d, 4d in all: "
                       "recheck the norms term."),
               Mistake(lambda m: _block_count(m, **BLOCK) - BLOCK["f"] - BLOCK["d"],
                       "漏掉了 FFN 的两个偏置（f + d）；请重查前馈网络那一项。",
                       "the FFN biases (f + d) are missing: recheck the feed-forward term."),
               Mistake(lambda m: _block_count(m, **BLOCK) + 4 * BLOCK["d"],
                       "给注意力的四个投影加了偏置（4d）；本课程的 Q/K/V/O 投影没有偏置。",
                       "this gives the four attention projections biases (4d); the course's Q/K/V/O projections have "
                       "none."),
           )),
    Answer("total_params", "total_params", "整机参数数 V=50, C=32, N=3, d=48, f=192",
           "whole-model parameters of V=50, C=32, N=3, d=48, f=192",
           lambda m: _model_count(m, **MODEL), exact=True, mistakes=_ledger_mistakes(**MODEL)),
    Answer("small_total_params", "small_total_params", "小模型参数数 V=9, C=7, N=3, d=6, f=10",
           "parameters of the small model V=9, C=7, N=3, d=6, f=10",
           lambda m: _model_count(m, **SMALL), exact=True, mistakes=_ledger_mistakes(**SMALL)),
)


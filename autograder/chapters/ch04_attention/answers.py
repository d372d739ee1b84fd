"""The answer cells of chapter 4: what each asks, its expected value and the known mistakes its
feedback can name.

The notebook walks through its own hand example (3 tokens, one head, d_h = 4: scores, the
masked rows, weights and output), the float32 overflow of exp(100), the split of a counting
tensor and the shapes of a cached decode, computed and asserted in given cells.  Each graded
answer asks for the same calculation on inputs the walkthrough does not use, so its value is
written nowhere in the student's notebook (tests/test_ch04_attention.py proves it).  Expected
values are computed here from the reference, in float64 where they are numbers, never typed in;
a mistake's value is computed the way the mistake computes it.
"""

import math

import torch

from autograder.registry import Answer, Mistake

# --- the questions' inputs (the notebook states them in its own words) -----------------

# one head of a model with d = 8 and h = 4, so d_h = 2: sqrt(d_h), sqrt(d) and d_h all differ
HEAD = dict(d=8, h=4)
Q = ((1.0, 0.0), (2.0, 1.0), (0.0, 3.0))
K = ((1.0, 1.0), (0.0, 2.0), (3.0, 0.0))
V = ((1.0, 2.0), (0.0, 1.0), (4.0, 0.0))
WEIGHTS_ROW, OUTPUT_ROW = 2, 1  # attn_row_weights asks for row 2, attn_output_row for row 1
MASKED = dict(B=2, h=3, T=7)  # attn_masked_count
SHAPES = dict(B=3, T=5, d=12, h=3, C=16)  # attn_shape_drill
CACHE = dict(B=2, d=32, h=4, C=16, prompt=6, steps=3)  # kv_cache_shapes


def _tensor(rows):
    return torch.tensor(rows, dtype=torch.float64)


def _masked_scores(model, divisor=None, masked=True):
    """The head's scores, -inf above the diagonal; `divisor` replaces sqrt(d_h) for the mistakes."""
    q, k = _tensor(Q), _tensor(K)
    scores = model.attention_scores(q, k) if divisor is None else q @ k.T / divisor
    if masked:
        scores = scores.masked_fill(~torch.ones(3, 3, dtype=torch.bool).tril(), float("-inf"))
    return scores


def _weights(model, **mistake):
    return model.stable_softmax(_masked_scores(model, **mistake))


def _row_weights(model, **mistake):
    return _weights(model, **mistake)[WEIGHTS_ROW].tolist()


def _output_row(model, weights=None, **mistake):
    weights = _weights(model, **mistake) if weights is None else weights
    return (weights @ _tensor(V))[OUTPUT_ROW].tolist()


def _column_softmax_output(model):
    """Softmax taken down each column (dim=-2) of the masked scores."""
    return _output_row(model, weights=model.stable_softmax(_masked_scores(model).transpose(0, 1)).transpose(0, 1))


def _masked_count(model, B, h, T, diagonal=False, one_head=False):
    mask = model.CausalSelfAttention(model.Config(1, T, h, h, 1, 1, 0.0)).causal_mask[:T, :T]
    per_head = int((~mask).sum()) + (T if diagonal else 0)
    return per_head if one_head else B * h * per_head


def _shape_table(model, B, T, d, h, C, math_shape=False, heads_last=False):
    attention = model.CausalSelfAttention(model.Config(1, C, d, h, 1, 1, 0.0))
    x = torch.zeros(B, T, d)
    q = attention.split_heads(x)
    scores = model.attention_scores(q, q)
    qkv = list(attention.qkv.weight.shape)
    return {
        "qkv_weight": qkv[::-1] if math_shape else qkv,
        "qkv_out": list(attention.qkv(x).shape),
        "per_head_q": [B, T, h, d // h] if heads_last else list(q.shape),
        "scores": list(scores.shape),
        "causal_mask": list(attention.causal_mask.shape),
        "merged": list(attention.merge_heads(q).shape),
    }


def _cache_table(model, B, d, h, C, prompt, steps, kept="all"):
    """Shapes after a prompt in one call and `steps` one-token calls; `kept` makes the mistakes:
    "steps" keeps only the decoded tokens in the cache, "new" only the newest one."""
    attention = model.CausalSelfAttention(model.Config(1, C, d, h, 1, 1, 0.0)).eval()
    with torch.no_grad():
        _, present = attention(torch.zeros(B, prompt, d), None, True)
        for step in range(steps):
            last = torch.zeros(B, 1, d)
            if kept == "steps" and step == 0:
                present = tuple(t[:, :, :0] for t in present)
            if kept == "new":
                present = None
            _, present = attention(last, present, True)
        q = attention.split_heads(last)
        total = present[0].shape[2]
        return {
            "present_key": list(present[0].shape),
            "last_query": list(q.shape),
            "last_scores": list(model.attention_scores(q, present[0]).shape),
            "last_mask_slice": list(attention.causal_mask[total - 1:total, :total].shape),
        }


def _overflow_limit(dtype):
    """The largest integer n whose exp(n) is finite in `dtype`."""
    n = 0
    while torch.isfinite(torch.exp(torch.tensor(float(n + 1), dtype=dtype))):
        n += 1
    return n


ANSWERS = (
    Answer("attn_row_weights", "attn_row_weights", "第二个算例：第 2 行（第三个词元）的注意力权重",
           "second example: the attention weights of row 2 (the third token)",
           lambda m: _row_weights(m),
           mistakes=(
               Mistake(lambda m: _row_weights(m, divisor=1.0),
                       "这是没有除以 √d_h 的结果；分数要先除以 √d_h（这里 d_h = 2）再做 softmax。",
                       "this is the result without dividing by sqrt(d_h); divide the scores by sqrt(d_h) (here "
                       "d_h = 2) before the softmax."),
               Mistake(lambda m: _row_weights(m, divisor=math.sqrt(HEAD["d"])),
                       "这是除以 √d（整个模型宽度 8）的结果；缩放用每头宽度 d_h = d/h。",
                       "this divides by sqrt(d) (the model width 8); the scale uses the head width d_h = d/h."),
               Mistake(lambda m: _row_weights(m, divisor=float(HEAD["d"] // HEAD["h"])),
                       "这是除以 d_h 本身（没开根号）的结果；缩放因子是 1/√d_h。",
                       "this divides by d_h itself (no square root); the factor is 1/sqrt(d_h)."),
           )),
    Answer("attn_output_row", "attn_output_row", "第二个算例：第 1 行（第二个词元）的输出",
           "second example: the output of row 1 (the second token)",
           lambda m: _output_row(m),
           mistakes=(
               Mistake(lambda m: _output_row(m, masked=False),
                       "这一行用到了第三个词元的值：没有施加因果掩码，未来可见。第 1 行只能看第 0、1 个词元。",
                       "this row used the third token's value: the causal mask was not applied, so the future is "
                       "visible. Row 1 sees tokens 0 and 1 only."),
               Mistake(_column_softmax_output,
                       "这是沿列（dim=-2）做 softmax 的结果；每个查询（每一行）的权重沿最后一根轴归一化。",
                       "this takes the softmax down the columns (dim=-2); each query's (each row's) weights are "
                       "normalised along the last axis."),
               Mistake(lambda m: _output_row(m, divisor=1.0),
                       "这是没有除以 √d_h 的结果；请重查分数那一步。",
                       "this is the result without dividing by sqrt(d_h): recheck the scores step."),
           )),
    Answer("attn_masked_count", "attn_masked_count", "B=2, h=3, T=7 的分数张量中 -inf 的个数",
           "number of -inf entries in the scores tensor of B=2, h=3, T=7",
           lambda m: _masked_count(m, **MASKED), exact=True,
           mistakes=(
               Mistake(lambda m: _masked_count(m, **MASKED, one_head=True),
                       "这只是一个序列、一个头的 T×T 矩阵里的个数；分数张量是 [B, h, T, T]，每个序列的每个头都有一份。",
                       "this counts one T x T matrix only; the scores tensor is [B, h, T, T], one matrix per "
                       "sequence and head."),
               Mistake(lambda m: _masked_count(m, **MASKED, diagonal=True),
                       "把对角线也算成了被遮住；位置 i 可以看自己（j = i），只有 j > i 的位置是 -inf。",
                       "the diagonal was counted as masked; position i sees itself (j = i), only j > i is -inf."),
           )),
    Answer("attn_shape_drill", "attn_shape_drill", "形状演练 B=3, T=5, d=12, h=3, C=16",
           "shape drill B=3, T=5, d=12, h=3, C=16",
           lambda m: _shape_table(m, **SHAPES), exact=True,
           mistakes=(
               Mistake(lambda m: _shape_table(m, **SHAPES, math_shape=True),
                       "qkv_weight 写成了数学形状 [d, 3d]；nn.Linear 把权重存为 [输出, 输入]，融合 QKV 的存储是 [3d, d]。",
                       "qkv_weight is written in the mathematical shape [d, 3d]; nn.Linear stores [out, in], so "
                       "the fused QKV storage is [3d, d]."),
               Mistake(lambda m: _shape_table(m, **SHAPES, heads_last=True),
                       "每头的 Q 把头轴留在了时间轴之后；拆头之后是 [B, h, T, d_h]。",
                       "the per-head Q keeps the head axis after time; split heads are [B, h, T, d_h]."),
           )),
    Answer("kv_cache_shapes", "kv_cache_shapes", "6 个词元的提示之后再解码 3 步时的 KV cache 形状",
           "KV-cache shapes after a 6-token prompt and 3 decoding steps",
           lambda m: _cache_table(m, **CACHE), exact=True,
           mistakes=(
               Mistake(lambda m: _cache_table(m, **CACHE, kept="steps"),
                       "缓存里只算了解码出来的词元；提示的键值在第一次调用时就进了 present，也要算上。",
                       "the cache counts the decoded tokens only; the prompt's keys and values entered present in the "
                       "first call and count too."),
               Mistake(lambda m: _cache_table(m, **CACHE, kept="new"),
                       "缓存里只有最新的一个词元：present 要包含全部过去的键值，沿时间轴（dim=2）越拼越长。",
                       "the cache holds the newest token only: present holds every past key and value and grows "
                       "along the time axis (dim=2)."),
           )),
    Answer("exp_overflow_limit", "exp_overflow_limit", "float32 中 exp(n) 仍有限的最大整数 n",
           "the largest integer n whose exp(n) is finite in float32",
           lambda m: _overflow_limit(torch.float32), exact=True,
           mistakes=(
               Mistake(lambda m: _overflow_limit(torch.float64),
                       "这是 float64 的界；PyTorch 的张量默认是 float32，它的最大值约 3.4e38，界要小得多。",
                       "this is the float64 limit; torch tensors are float32 by default, whose maximum is about "
                       "3.4e38, so the limit is much lower."),
               Mistake(lambda m: _overflow_limit(torch.float32) + 1,
                       "这是第一个溢出的整数；题目要的是 exp 仍然有限的最大整数。",
                       "this is the first integer that overflows; the question asks for the largest one whose exp is "
                       "still finite."),
           )),
)

"""The answer cells of chapter 8: what each asks, its expected value and the known mistakes its
feedback can name.

The notebook walks through its own small examples (a stream of 10 ids with T = 4, the
chapter's schedule, gradients (1, 2, 2) and (4), the logits (2, 1, 1, 0, -1), a prompt of 3
and 4 new tokens, the chapter's model), computed and asserted in given cells.  Each graded
answer asks for the same calculation on inputs the walkthrough does not use.  Expected values
are computed here from the reference (train.py, and model.py through it), never typed in; a
mistake's value is computed the way the mistake computes it.
"""

import math
from typing import NamedTuple, Optional

import torch

from autograder.reference import load
from autograder.registry import Answer, Mistake

MODULE = "train"

# --- the questions' inputs (the notebook states them in its own words) -----------------

STREAM = dict(length=5000, block_size=48)  # window_starts
HELD_OUT = dict(length=2048, block_size=64)  # eval_tokens
SCHEDULE = dict(max_lr=1.0, min_lr=0.1, warmup_steps=100, total_steps=1000)  # cosine_lr
COSINE_STEP = 400
GRADIENTS = ((2.0, -1.0), (4.0, 2.0, -4.0))  # clipped_grad: two parameters' gradients
MAX_NORM = 2.0
LOGITS = (3.0, 1.0, 2.0, 1.0, 0.0)  # topk_probs
TEMPERATURE, TOP_K = 0.5, 3
PROMPT, NEW = 16, 48  # uncached_positions
MODEL = dict(V=300, C=32, N=3, d=48, f=192)  # decay_count


def _window_starts(length, block_size, extra=0):
    """How many different starts torch.randint(len(data) - T) can draw (the reference's bound)."""
    return len(range(length - block_size + extra))


def _scored_tokens(m, length, block_size, windows=None):
    """Tokens evaluate scores, counted by running the reference on a model that counts them."""
    counted = []

    class Counter(torch.nn.Module):
        def forward(self, x, y=None):
            counted.append(y.numel())
            return _Output(torch.zeros(()), torch.zeros(()), None)

    if windows is None:
        m.evaluate(Counter(), torch.zeros(length, dtype=torch.int64), block_size, 8)
        return sum(counted)
    return windows * block_size


class _Output(NamedTuple):
    logits: torch.Tensor
    loss: Optional[torch.Tensor]
    past_key_values: Optional[list]


def _cosine(progress):
    s = SCHEDULE
    return s["min_lr"] + 0.5 * (s["max_lr"] - s["min_lr"]) * (1 + math.cos(math.pi * progress))


def _clipped(per_tensor=False):
    grads = [torch.tensor(g, dtype=torch.float64) for g in GRADIENTS]
    params = [torch.zeros_like(g, requires_grad=True) for g in grads]
    for p, g in zip(params, grads):
        p.grad = g.clone()
    if per_tensor:
        for p in params:
            torch.nn.utils.clip_grad_norm_([p], MAX_NORM)
    else:
        torch.nn.utils.clip_grad_norm_(params, MAX_NORM)
    return params[0].grad.tolist()


def _probs(m, logits=LOGITS, temperature=TEMPERATURE, top_k=TOP_K):
    return m.next_token_probs(torch.tensor([logits], dtype=torch.float64), temperature, top_k)[0].tolist()


def _exactly_k(m):
    """The ties-dropped mistake: keep exactly top_k entries by torch.topk's indices."""
    scaled = torch.tensor(LOGITS, dtype=torch.float64) / TEMPERATURE
    keep = torch.zeros_like(scaled, dtype=torch.bool)
    keep[torch.topk(scaled, TOP_K).indices] = True
    return torch.softmax(scaled.masked_fill(~keep, float("-inf")), dim=-1).tolist()


def _fed_positions(m, use_cache, prompt=PROMPT, new=NEW):
    """Token positions the model processes while the reference generates, counted by a model
    that records what it is fed."""
    fed = []

    class Recorder(torch.nn.Module):
        cfg = type("cfg", (), {"block_size": prompt + new})

        def forward(self, idx, targets=None, past_key_values=None, use_cache=False):
            fed.append(idx.shape[1])
            past = 0 if past_key_values is None else past_key_values[0][0].shape[2]
            keys = torch.zeros(idx.shape[0], 1, past + idx.shape[1], 1)
            return _Output(torch.zeros(idx.shape[0], idx.shape[1], 3), None, [(keys, keys)] if use_cache else None)

    m.generate(Recorder(), torch.zeros(1, prompt, dtype=torch.int64), new, temperature=0.0, use_cache=use_cache)
    return sum(fed)


def _decayed_scalars(m, rule="reference"):
    model = load("model")
    V, C, N, d, f = (MODEL[k] for k in ("V", "C", "N", "d", "f"))
    net = model.TransformerLM(model.Config(V, C, d, 4, N, f, 0.0))
    if rule == "ndim":
        return sum(p.numel() for p in net.parameters() if p.ndim >= 2)
    return sum(p.numel() for p in m.parameter_groups(net, 0.1)[0]["params"])


ANSWERS = (
    Answer("window_starts", "window_starts", "5000 个 id、T=48 时 get_batch 可能抽到的不同起点数",
           "how many different starts get_batch can draw from 5000 ids with T = 48",
           lambda m: _window_starts(**STREAM), exact=True, module=MODULE,
           mistakes=(
               Mistake(lambda m: _window_starts(**STREAM, extra=1),
                       "多算了一个起点：从 len(data) − T 起的窗口，目标要取到 data[len(data)]，越界了。请重查最大的起点。",
                       "one start too many: the window from len(data) - T needs a target at data[len(data)], past the "
                       "end. Recheck the largest start."),
               Mistake(lambda m: _window_starts(**STREAM, extra=-1),
                       "少算了一个起点：torch.randint(n) 抽的是 0 到 n−1 共 n 个数。请重查上界。",
                       "one start too few: torch.randint(n) draws the n numbers 0 to n-1. Recheck the bound."),
           )),
    Answer("eval_tokens", "eval_tokens", "2048 个 id、T=64 时 evaluate 计分的词元数",
           "how many tokens evaluate scores on 2048 ids with T = 64",
           lambda m: _scored_tokens(m, **HELD_OUT), exact=True, module=MODULE,
           mistakes=(
               Mistake(lambda m: _scored_tokens(m, **HELD_OUT, windows=HELD_OUT["length"] // HELD_OUT["block_size"]),
                       "窗口数算成了 len(data) // T：最后一个窗口的目标还需要多一个 id，窗口数是 (len(data) − 1) // T。",
                       "the window count was taken as len(data) // T: the last window's targets need one more id, so it "
                       "is (len(data) - 1) // T."),
               Mistake(lambda m: HELD_OUT["length"] - 1,
                       "这是“除第一个 id 外每个 id 都当一次目标”的数；evaluate 只用完整的、不重叠的窗口，末尾凑不满一个窗口的部分不计。",
                       "this counts every id but the first as a target; evaluate uses whole, non-overlapping windows only, "
                       "and a tail too short for a window is not scored."),
           )),
    Answer("cosine_lr", "cosine_lr", "max_lr=1、min_lr=0.1、warmup 100、共 1000 步时第 400 步的学习率",
           "the learning rate at step 400 with max_lr 1, min_lr 0.1, warmup 100, 1000 steps",
           lambda m: m.lr_at(COSINE_STEP, **SCHEDULE), module=MODULE,
           mistakes=(
               Mistake(lambda m: _cosine(COSINE_STEP / SCHEDULE["total_steps"]),
                       "进度没有扣掉 warmup：p = (step − warmup)/(total − warmup)，不是 step/total。",
                       "the progress ignores warmup: p = (step - warmup)/(total - warmup), not step/total."),
               Mistake(lambda m: _cosine((COSINE_STEP - SCHEDULE["warmup_steps"]) / SCHEDULE["total_steps"]),
                       "分母用了 total_steps：余弦只覆盖 warmup 之后的 total − warmup 步。",
                       "the denominator is total_steps: the cosine spans the total - warmup steps after warmup only."),
               Mistake(lambda m: _cosine((COSINE_STEP - SCHEDULE["warmup_steps"])
                                         / (SCHEDULE["total_steps"] - SCHEDULE["warmup_steps"])) - SCHEDULE["min_lr"]
                       * 0.5 * (1 - math.cos(math.pi * (COSINE_STEP - SCHEDULE["warmup_steps"])
                                            / (SCHEDULE["total_steps"] - SCHEDULE["warmup_steps"]))),
                       "这是衰减到 0 的余弦：它应衰减到 min_lr，即 min_lr + ½(max_lr − min_lr)(1 + cos πp)。",
                       "this cosine decays to 0; it decays to min_lr: min_lr + (max_lr - min_lr)(1 + cos(pi p))/2."),
           )),
    Answer("clipped_grad", "clipped_grad", "总范数裁剪到 2 之后第一个参数的梯度",
           "the first parameter's gradient after clipping the total norm to 2",
           lambda m: _clipped(), module=MODULE,
           mistakes=(
               Mistake(lambda m: _clipped(per_tensor=True),
                       "这是每个参数各自裁剪的结果；clip_grad_norm_ 把所有参数的梯度拼成一个向量，按总范数统一缩放。",
                       "this clips each parameter on its own; clip_grad_norm_ treats all gradients as one vector and "
                       "scales them by one factor from the total norm."),
               Mistake(lambda m: [max(-MAX_NORM, min(MAX_NORM, g)) for g in GRADIENTS[0]],
                       "这是按值截断（clip_grad_value_）的结果；按范数裁剪时，总范数超过 2 就要整体缩小。",
                       "this clamps values (clip_grad_value_); clipping by norm scales everything down when the total "
                       "norm exceeds 2."),
           )),
    Answer("topk_probs", "topk_probs", "logits (3, 1, 2, 1, 0)、温度 0.5、top_k=3 的下一词元概率",
           "next-token probabilities of logits (3, 1, 2, 1, 0) at temperature 0.5 with top_k = 3",
           lambda m: _probs(m), module=MODULE,
           mistakes=(
               Mistake(_exactly_k, "只保留了恰好 3 个：与第 3 大的值并列的词元也要保留。",
                       "exactly 3 entries were kept: entries tied with the third largest value are kept too."),
               Mistake(lambda m: torch.softmax(torch.tensor(LOGITS, dtype=torch.float64) * TEMPERATURE, -1).tolist(),
                       "logits 乘了温度（而且没有做 top-k）：应除以温度，再把第 3 大以下的设为 -inf。",
                       "the logits were multiplied by the temperature (and no top-k): divide by it, then set what lies "
                       "below the third largest to -inf."),
               Mistake(lambda m: _probs(m, top_k=None),
                       "没有做 top-k：第 3 大的值以下的词元概率应恰好为 0。",
                       "no top-k: entries below the third largest value get probability exactly 0."),
           )),
    Answer("uncached_positions", "uncached_positions", "不带缓存、提示 16 个词元、生成 48 个时模型处理的位置总数",
           "token positions the model processes without the cache, prompt of 16, 48 new tokens",
           lambda m: _fed_positions(m, use_cache=False), exact=True, module=MODULE,
           mistakes=(
               Mistake(lambda m: _fed_positions(m, use_cache=True),
                       "这是带缓存时的数：不带缓存，每一步都要把整段序列重新喂一遍。",
                       "this is the count with the cache: without it, every step feeds the whole sequence again."),
               Mistake(lambda m: _fed_positions(m, use_cache=False) + PROMPT + NEW,
                       "多算了一次调用：最后一个新词元只需抽出来，不必再喂给模型。",
                       "one call too many: the last new token is only drawn, never fed back to the model."),
               Mistake(lambda m: NEW * (PROMPT + NEW),
                       "每一步都按最终长度 16 + 48 计了：第 t 步喂的是当时的长度 16 + t。",
                       "every step was counted at the final length 16 + 48: step t feeds the length it has then, 16 + t."),
           )),
    Answer("decay_count", "decay_count", "V=300, C=32, N=3, d=48, f=192 的模型中衰减的标量参数个数",
           "how many scalar parameters decay in the model V=300, C=32, N=3, d=48, f=192",
           lambda m: _decayed_scalars(m), exact=True, module=MODULE,
           mistakes=(
               Mistake(lambda m: _decayed_scalars(m, rule="ndim"),
                       "这是 p.ndim < 2 规则的数：它把两张嵌入表（Vd + Cd）也算进了衰减组。",
                       "this is the p.ndim < 2 rule's count: it puts both embedding tables (Vd + Cd) in the decayed group."),
               Mistake(lambda m: _decayed_scalars(m) - MODEL["V"] * MODEL["d"],
                       "漏掉了输出 head（Vd）：它是一个 nn.Linear，它的权重要衰减。",
                       "the output head (Vd) is missing: it is an nn.Linear, and its weight decays."),
               Mistake(lambda m: _decayed_scalars(m) + MODEL["N"] * (MODEL["f"] + MODEL["d"]),
                       "把 FFN 的偏置（每块 f + d）也算进了衰减组；偏置不衰减。",
                       "the FFN biases (f + d per block) were counted as decayed; biases do not decay."),
           )),
)

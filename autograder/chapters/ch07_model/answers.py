"""The answer cells of chapter 7: what each asks, its expected value and the known mistakes its
feedback can name.

The notebook walks through its own numbers (the chapter's configuration V=32, d=64, N=2: the
residual writers' std 0.01, a logit std of about 0.16 at initialisation, ln 32, a KV cache of
16,384 numbers, a reused block's gap of 49,728; seed 003's deep model), computed and asserted in
given cells.  Each graded answer asks for the same calculation on inputs the walkthrough does not
use, so its value is written nowhere in the student's notebook (tests/test_ch07_model.py proves
it).  Expected values are computed here from the reference, never typed in; a mistake's value is
computed the way the mistake computes it.
"""

import math

import torch
from torch import nn

from autograder.reference import load
from autograder.registry import Answer, Mistake

# --- the questions' inputs (the notebook states them in its own words) -----------------

VOCAB = 500  # uniform_loss
LAYERS = 6  # residual_init_std
WIDTH = 96  # init_logit_std
REUSED = dict(V=50, C=32, N=4, d=16, f=64)  # reused_block_gap
CACHE = dict(N=3, B=2, d=32, h=4, prompt=6, steps=3)  # kv_cache_floats


def _uniform_loss(model, log=math.log):
    return log(VOCAB)


def _residual_std(model, layers=None, root=True):
    writes = 2 * LAYERS if layers is None else layers
    return 0.02 / (math.sqrt(writes) if root else writes)


def _logit_std(model, power=0.5):
    return 0.02 * WIDTH ** power


def _reused_gap(model):
    """ledger_gap of the reference on a TransformerLM whose N blocks are one object."""
    V, C, N, d, f = REUSED.values()
    lm = model.TransformerLM(model.Config(V, C, d, 4, N, f, 0.0))
    lm.blocks = nn.ModuleList([lm.blocks[0]] * N)
    return load("audit").ledger_gap(lm)


def _one_block(model):
    V, C, N, d, f = REUSED.values()
    return model.parameter_count(V, C, 1, d, f) - model.parameter_count(V, C, 0, d, f)


def _cache_floats(model, per_layer=2, layers=None, heads_times=1):
    """The numbers the reference's past_key_values holds after a prompt and some decode steps."""
    N, B, d, h, prompt, steps = CACHE.values()
    torch.manual_seed(0)
    lm = model.TransformerLM(model.Config(vocab_size=10, block_size=16, d_model=d, n_heads=h, n_layers=N,
                                          d_ff=2 * d, dropout=0.0)).eval()
    with torch.no_grad():
        out = lm(torch.zeros(B, prompt, dtype=torch.long), use_cache=True)
        for _ in range(steps):
            out = lm(torch.zeros(B, 1, dtype=torch.long), past_key_values=out.past_key_values, use_cache=True)
    entries = out.past_key_values if layers is None else out.past_key_values[:layers]
    return sum(tensor.numel() for present in entries for tensor in present[:per_layer]) * heads_times


def _audit_setup():
    """The question's model: a lookup table, a mixing layer, an extra layer the forward skips, an
    output layer; the table frozen, the optimizer built from the mixing and the extra layer only."""
    torch.manual_seed(0)

    class Toy(nn.Module):
        def __init__(self):
            super().__init__()
            self.lookup = nn.Embedding(5, 3)
            self.mix = nn.Linear(3, 3)
            self.extra = nn.Linear(3, 3)
            self.out = nn.Linear(3, 5, bias=False)

        def forward(self, ids):
            x = self.lookup(ids)
            return self.out(x + self.mix(x))  # extra is never called

    toy = Toy()
    toy.lookup.weight.requires_grad_(False)
    optimizer = torch.optim.SGD(list(toy.mix.parameters()) + list(toy.extra.parameters()), lr=0.1)
    toy(torch.tensor([[0, 1, 2], [3, 4, 0]])).logsumexp(-1).mean().backward()
    return toy, optimizer


def _audit_flags(audit):
    toy, optimizer = _audit_setup()
    return {"frozen": audit.frozen_parameters(toy), "unreached": audit.unreached_parameters(toy),
            "unoptimized": audit.unoptimized_parameters(toy, optimizer)}


def _flags_with(audit, **changes):
    return {**_audit_flags(audit), **changes}


ANSWERS = (
    Answer("uniform_loss", "uniform_loss", "V = 500 时均匀预测的交叉熵（nats）",
           "cross entropy of a uniform prediction over V = 500 (nats)",
           _uniform_loss,
           mistakes=(
               Mistake(lambda m: _uniform_loss(m, math.log2),
                       "这是以 2 为底（bits）的结果；本课程的交叉熵用自然对数（nats），请用 math.log。",
                       "this is the base-2 result (bits); the course's cross entropy uses natural logarithms (nats): "
                       "use math.log."),
               Mistake(lambda m: _uniform_loss(m, math.log10),
                       "这是以 10 为底的对数；交叉熵用自然对数 ln V。", "this is the base-10 logarithm; the cross "
                       "entropy uses the natural logarithm ln V."),
           )),
    Answer("residual_init_std", "residual_init_std", "N = 6 层时残差写入矩阵的初始化标准差",
           "initial std of the residual writers for N = 6 layers",
           _residual_std,
           mistakes=(
               Mistake(lambda m: _residual_std(m, layers=LAYERS),
                       "这是 0.02/√N；每块有两条残差分支，共 2N 次写入，应除以 √(2N)。",
                       "this is 0.02/sqrt(N); each block has two residual branches, 2N writes in all: divide by "
                       "sqrt(2N)."),
               Mistake(lambda m: _residual_std(m, root=False),
                       "这是 0.02/(2N)：缩放的是方差（1/(2N)），标准差只除以 √(2N)。",
                       "this is 0.02/(2N): the variance is scaled by 1/(2N), so the std is divided by sqrt(2N) only."),
               Mistake(lambda m: _residual_std(m) ** 2,
                       "这是方差（std 的平方）；题目问的是标准差。", "this is the variance (the std squared); the question "
                       "asks for the standard deviation."),
           )),
    Answer("init_logit_std", "init_logit_std", "d = 96 时初始化下一个 logit 的标准差",
           "std of one logit at initialisation for d = 96",
           _logit_std,
           mistakes=(
               Mistake(lambda m: _logit_std(m, power=1.0),
                       "这是 0.02·d；d 个独立项相加，方差乘 d，标准差只乘 √d。",
                       "this is 0.02*d; adding d independent terms multiplies the variance by d, so the std by "
                       "sqrt(d) only."),
               Mistake(lambda m: 0.02 ** 2 * WIDTH,
                       "这是方差 0.02²·d；题目问的是标准差，再开一次平方根。",
                       "this is the variance 0.02^2*d; the question asks for the standard deviation: take the square "
                       "root."),
               Mistake(lambda m: 0.02, "这只是一个权重的标准差；一个 logit 是 d 个乘积之和。",
                       "this is the std of one weight; a logit is a sum of d products."),
           )),
    Answer("reused_block_gap", "reused_block_gap", "V=50, C=32, N=4, d=16, f=64 且复用一个块对象时的 ledger_gap",
           "ledger_gap of V=50, C=32, N=4, d=16, f=64 with one block object reused",
           _reused_gap, exact=True, module="model",
           mistakes=(
               Mistake(lambda m: REUSED["N"] * _one_block(m),
                       "这是 N 块的参数；复用时仍注册了一块，差的是 N-1 块。",
                       "this is N blocks' parameters; a reused block still registers one, so N-1 blocks are missing."),
               Mistake(lambda m: _one_block(m), "这是一块的参数；N 层共用一个对象时少注册了 N-1 块。",
                       "this is one block's parameters; N layers sharing one object register N-1 blocks too few."),
               Mistake(lambda m: -_reused_gap(m), "符号反了：ledger_gap 是账本减注册数，复用块时为正。",
                       "the sign is reversed: ledger_gap is the ledger minus the registered count, positive for a "
                       "reused block."),
           )),
    Answer("kv_cache_floats", "kv_cache_floats", "N=3, B=2, d=32, 6 个提示词元再生成 3 步后 KV cache 里的数",
           "numbers in the KV cache after a 6-token prompt and 3 decode steps, N=3, B=2, d=32",
           _cache_floats, exact=True,
           mistakes=(
               Mistake(lambda m: _cache_floats(m, per_layer=1),
                       "只算了键：每层缓存键和值两份。", "only the keys are counted: each layer caches keys and values."),
               Mistake(lambda m: _cache_floats(m, layers=1),
                       "只算了一层：每个块各有一份缓存，共 N 份。", "only one layer is counted: every block has its own "
                       "cache, N in all."),
               Mistake(lambda m: _cache_floats(m, heads_times=CACHE["h"]),
                       "多乘了头数 h：每个头宽 d_h = d/h，h 个头合起来仍是 d。",
                       "the head count h was multiplied in: each head is d_h = d/h wide, all h heads together are d."),
           )),
    Answer("audit_flags", "audit_flags", "三个问题各自标出哪些参数", "which parameters each of the three questions flags",
           _audit_flags, exact=True, module="audit",
           mistakes=(
               Mistake(lambda a: _flags_with(a, unreached=["lookup.weight", "extra.weight", "extra.bias"]),
                       "把冻结的 lookup.weight 也算进了问题二：它的 grad 是 None，但冻结是问题一的事，问题二只看可训练参数。",
                       "the frozen lookup.weight is in question 2 too: its grad is None, but frozen is question 1's "
                       "business; question 2 looks at trainable parameters only."),
               Mistake(lambda a: _flags_with(a, unoptimized=["lookup.weight", "out.weight"]),
                       "把冻结的 lookup.weight 也算进了问题三：冻结参数不在优化器里是对的，问题三只看可训练参数。",
                       "the frozen lookup.weight is in question 3 too: a frozen parameter may stay out of the optimizer; "
                       "question 3 looks at trainable parameters only."),
               Mistake(lambda a: _flags_with(a, unoptimized=[]),
                       "out.weight 不在优化器里：优化器只由 mix 和 extra 的参数建成。",
                       "out.weight is not in the optimizer: it was built from the parameters of mix and extra only."),
           )),
)

"""Visible checks: properties of chapter 5 that you can test on your own code.

Each ``judge_*`` function looks at outputs only and returns ``None`` when the
property holds, or a ``(中文, English)`` pair that says what is wrong.  The
``check_*`` functions run your code on small inputs, apply the judges and
raise ``AssertionError`` with the Chinese message.  An exercise that is still
a stub is not an error: the check says so on stderr and returns, so Run All
goes on (and nbgrader's Validate, which counts stderr, still lists it as not done).
The autograder applies the same judges to the outputs of your code in its own
process.
"""

import functools
import sys

import torch

# One tolerance for every float comparison in this course: float32 outputs,
# reductions in any order, float64 computed and cast back, or CUDA without TF32
# all agree with the reference to about 1e-6 relative; the closest misconception
# the grader knows (tanh-GELU) is 4.7e-4 away (docs/grading.md).
TOLERANCE = {"rtol": 1e-4, "atol": 1e-5}


def _close(a, b):
    return a.shape == b.shape and torch.allclose(a.double(), b.double(), **TOLERANCE)


def judge_same_shape(x, y):
    if not isinstance(y, torch.Tensor):
        return (f"应返回张量，实际返回了 {type(y).__name__}。", f"expected a tensor, got {type(y).__name__}.")
    if y.shape != x.shape:
        return (
            f"输出形状 {tuple(y.shape)} 与输入形状 {tuple(x.shape)} 不同；块和子层都应保持 [B, T, d]。",
            f"output shape {tuple(y.shape)} differs from input shape {tuple(x.shape)}; [B, T, d] must be kept.",
        )
    return None


def judge_identity(x, y):
    """With both branches returning zero, a pre-LN block is exactly the identity."""
    if y.shape != x.shape or not torch.equal(y, x):
        return (
            "两条分支都输出零时，pre-LN 块应严格等于输入 X；"
            "若输出被标准化了，多半是把 LayerNorm 放到了残差相加之后（post-LN）。",
            "with both branches returning zero the pre-LN block must return X exactly; "
            "a normalised output usually means LayerNorm sits after the residual addition (post-LN).",
        )
    return None


def judge_causal(y, y_changed, first_changed):
    """Changing positions >= first_changed must leave earlier outputs unchanged."""
    if not _close(y[:, :first_changed], y_changed[:, :first_changed]):
        return (
            "只改变了未来位置的输入，过去位置的输出却变了：有信息从未来泄漏。"
            "检查是否沿时间轴做了统计，或把某个 [B,1,d] 的量广播到所有位置。",
            "changing only future inputs changed earlier outputs: information leaks from the future. "
            "Look for statistics over the time axis or a [B,1,d] tensor broadcast to every position.",
        )
    return None


def judge_shift_invariant(y, y_shifted):
    if not _close(y, y_shifted):
        return (
            "给一个位置的所有特征加同一个常数，LayerNorm 的输出应不变（均值随之平移，中心化坐标不变）。",
            "adding one constant to every feature of a position must not change LayerNorm's output.",
        )
    return None


def judge_normalised_stats(x, y, eps=1e-5):
    """Default gamma/beta: each position has mean 0 and variance v / (v + eps)."""
    variance = x.double().var(dim=-1, unbiased=False)
    expected = variance / (variance + eps)
    mean = y.double().mean(dim=-1)
    got = y.double().var(dim=-1, unbiased=False)
    if not torch.allclose(mean, torch.zeros_like(mean), **TOLERANCE):
        return ("默认 gamma=1、beta=0 时，每个位置输出的均值应为 0。", "with gamma=1, beta=0 each position must have mean 0.")
    if not torch.allclose(got, expected, **TOLERANCE):
        return (
            "默认 gamma=1、beta=0 时，每个位置输出的人口方差应为 v/(v+eps)（除以 d，不是 d-1）。",
            "with gamma=1, beta=0 each position's population variance must be v/(v+eps) (divide by d, not d-1).",
        )
    return None


def judge_gelu_symmetry(a, g_a, g_minus_a):
    """Phi(-a) = 1 - Phi(a) gives g(a) - g(-a) = a.  ReLU passes this too."""
    if not torch.allclose((g_a - g_minus_a).double(), a.double(), **TOLERANCE):
        return (
            "GELU 应满足 g(a) - g(-a) = a（由 Phi(-a) = 1 - Phi(a) 得出）；你的实现不满足。",
            "GELU must satisfy g(a) - g(-a) = a (from Phi(-a) = 1 - Phi(a)); yours does not.",
        )
    return None


def judge_ledger(formula, registered):
    """The count is not shown: it is what the notebook asks the student to compute."""
    if formula != registered:
        return (
            f"参数账本给出 {formula}，与模型实际注册的参数个数不一致。"
            "逐项核对：4d^2（Q/K/V/O）、2df + f + d（FFN 权重与偏置）、4d（两套 LayerNorm）、"
            "2Vd（嵌入与未绑定的 head）、Cd（位置表）、2d（final LayerNorm）。",
            f"the ledger gives {formula}, which is not the number of parameters the model registers. "
            "Check each term: 4d^2 (Q/K/V/O), 2df + f + d (FFN weights and biases), 4d (two LayerNorms), "
            "2Vd (embedding and the untied head), Cd (position table), 2d (final LayerNorm).",
        )
    return None


# --- checks you run in the notebook ------------------------------------------


def _model():
    from hero_transformer import model

    return model


def _raise_if(problem):
    if problem is not None:
        raise AssertionError(problem[0] + "\n(" + problem[1] + ")")


def _not_implemented(stub, check, module):
    where = f" hero_transformer/{module}.py 里的它" if stub == check else "它"
    print(f"· 尚未实现：练习 {stub} 还是 raise NotImplementedError('{stub}')"
          + ("" if stub == check else "（这个检查要用到它）") + f"。完成{where}并保存，"
          f"再运行这个单元格。\n  (not implemented yet: exercise {stub} is still a stub"
          + ("" if stub == check else ", and this check needs it") + ")", file=sys.stderr)


def visible_check(exercise, module="model"):
    """A check of `exercise` (a stub in hero_transformer/<module>.py): a stub it meets (this
    exercise's or one it needs) is reported in one line instead of a traceback."""
    def wrap(check):
        @functools.wraps(check)
        def run():
            try:
                return check()
            except NotImplementedError as exc:
                if not str(exc).isidentifier():  # not a stub's own message: a real error
                    raise
                _not_implemented(str(exc), exercise, module)
        return run
    return wrap


def answered(name, value):
    """False (and a one-line note) while an answer cell still holds its placeholder `...`."""
    if value is ...:
        print(f"· 尚未作答：把答案单元格里 {name} = ... 的 ... 换成你的计算，再运行这个单元格。"
              f"\n  (not answered yet: replace the ... in {name} = ...)", file=sys.stderr)
        return False
    return True


def _passed(what):
    # never "all tests passed": these are the visible checks, the hidden ones run after submission
    print(f"✓ 可见检查通过：{what}。这不是最终成绩，提交后还会运行隐藏测试。"
          f"\n  (visible checks passed; hidden tests run after you submit)")


def _small_config(model):
    return model.Config(vocab_size=10, block_size=6, d_model=4, n_heads=2, n_layers=2, d_ff=8, dropout=0.0)


@visible_check("layer_norm")
def check_layer_norm():
    model = _model()
    torch.manual_seed(0)
    x = 3 * torch.randn(2, 3, 4) + 1
    norm = model.LayerNorm(4)
    with torch.no_grad():
        y, y_shifted = norm(x), norm(x + 7.5)
    _raise_if(judge_same_shape(x, y))
    _raise_if(judge_normalised_stats(x, y, norm.eps))
    _raise_if(judge_shift_invariant(y, y_shifted))
    _passed("LayerNorm：形状、均值 0、方差 v/(v+eps)、平移不变")


@visible_check("gelu")
def check_gelu():
    model = _model()
    a = torch.tensor([0.3, 1.0, 2.5])
    _raise_if(judge_gelu_symmetry(a, model.gelu(a), model.gelu(-a)))
    negative = model.gelu(torch.tensor([-1.0]))
    if not negative.item() < 0:
        raise AssertionError("GELU 对负输入应给出小的负值，而不是 0（那是 ReLU）。\n(GELU of a negative input is slightly negative, not 0.)")
    _passed("GELU：对称恒等式 g(a)-g(-a)=a 成立，负输入给出负值（ReLU 也能通过对称恒等式，数值要靠隐藏测试核对）")


@visible_check("feedforward")
def check_feedforward():
    model = _model()
    torch.manual_seed(0)
    ffn = model.FeedForward(_small_config(model)).eval()
    x = torch.randn(2, 3, 4)
    x_changed = x.clone()
    x_changed[:, 2] += 1.0
    with torch.no_grad():
        y, y_changed = ffn(x), ffn(x_changed)
    _raise_if(judge_same_shape(x, y))
    _raise_if(judge_causal(y, y_changed, 2))
    _passed("FeedForward：形状保持，逐位置计算")


@visible_check("block")
def check_block():
    model = _model()
    torch.manual_seed(0)
    block = model.TransformerBlock(_small_config(model)).eval()
    x = torch.randn(2, 3, 4)
    x_changed = x.clone()
    x_changed[:, 2] = torch.randn(2, 4)
    with torch.no_grad():
        y, _ = block(x)
        y_changed, _ = block(x_changed)
        for branch in (block.attention.proj, block.feedforward.fc2):
            branch.weight.zero_()
            if branch.bias is not None:
                branch.bias.zero_()
        y_zero, _ = block(x)
    _raise_if(judge_same_shape(x, y))
    _raise_if(judge_causal(y, y_changed, 2))
    _raise_if(judge_identity(x, y_zero))
    _passed("TransformerBlock：形状 [2,3,4] 保持，因果，分支为零时严格恒等")


@visible_check("parameter_count")
def check_ledger():
    model = _model()
    for V, C, N, d, h, f in ((32, 64, 2, 64, 4, 256), (10, 6, 2, 4, 2, 8)):
        lm = model.TransformerLM(model.Config(V, C, d, h, N, f, 0.0))
        registered = sum(p.numel() for p in lm.parameters())
        _raise_if(judge_ledger(model.parameter_count(V, C, N, d, f), registered))
    _passed("参数账本与模型注册的参数数量一致")

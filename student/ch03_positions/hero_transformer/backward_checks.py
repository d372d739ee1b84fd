"""Visible checks of chapter 6 (gradients by hand): properties you can test on your own code.

As in checks.py, each ``judge_*`` function looks at outputs only and returns ``None`` when the
property holds, or a ``(中文, English)`` pair that says what is wrong; the ``check_*``
functions run your code on small inputs and raise ``AssertionError`` with the Chinese message.
The autograder applies the same judges to the outputs of your code in its own process, where it
also compares your gradients with autograd's on its hidden float64 cases.

Here (and only here: not in your backward.py) autograd is used freely: it is the independent
witness your hand-written gradients are compared with, and ``torch.autograd.gradcheck`` wraps
your backward in a ``torch.autograd.Function`` and compares it with finite differences.
"""

import math

import torch

from .checks import (TOLERANCE, _passed, _raise_if, answered, show_tracebacks, standing_in,  # noqa: F401
                     visible_check)

MODULE = "backward"

# analytic against analytic in float64: both are exact up to rounding, so the bar is far tighter
# than TOLERANCE (which allows float32); the nearest fault the grader knows is off by > 1e-6
GRADIENT_TOLERANCE = {"rtol": 1e-7, "atol": 1e-9}
SUBLAYER_KEYS = ("ln.weight", "ln.bias", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias")


def _tensor_problem(value, name):
    if not isinstance(value, torch.Tensor):
        return (f"{name} 应是张量，实际是 {type(value).__name__}。", f"{name} should be a tensor, got {type(value).__name__}.")
    return None


# --- judges --------------------------------------------------------------------------


def judge_matches_autograd(got, expected, name):
    """Your gradient `name` against autograd's, in float64 (shape, dtype and values)."""
    problem = _tensor_problem(got, name)
    if problem:
        return problem
    if tuple(got.shape) != tuple(expected.shape):
        return (f"{name} 的形状 {tuple(got.shape)} 不对：梯度与它对应的量同形，应为 {tuple(expected.shape)}。",
                f"{name} has shape {tuple(got.shape)}; a gradient has the shape of what it differentiates, "
                f"{tuple(expected.shape)}.")
    if not torch.allclose(got.double(), expected.double(), **GRADIENT_TOLERANCE):
        return (f"{name} 与 autograd 在 float64 下算出的梯度不一致。请对照公式逐项检查（每一条路径都要算上）。",
                f"{name} differs from autograd's gradient in float64: check the formula term by term (every "
                "path must be counted).")
    return None


def judge_rows_sum_to_zero(grad_x):
    """LayerNorm ignores a shift of all features, so its input gradient sums to 0 over them."""
    problem = _tensor_problem(grad_x, "grad_x")
    if problem:
        return problem
    sums = grad_x.double().sum(dim=-1)
    scale = grad_x.double().abs().sum(dim=-1) + 1.0
    if not (sums.abs() <= 1e-6 * scale).all():
        return ("LayerNorm 的 grad_x 在每个位置上沿特征轴求和应为 0：给所有特征加同一个常数，输出不变"
                "（平移不变），所以沿 (1, ..., 1) 方向的导数为 0。多半是漏掉了“经过均值”的那一项 -mean(g)。",
                "LayerNorm's grad_x must sum to 0 over the features of every position: adding one constant to "
                "every feature leaves the output unchanged (shift invariance), so the derivative along (1, ..., 1) "
                "is 0. The term through the mean, -mean(g), is probably missing.")
    return None


def scale_leak(grad_out, x, weight, eps):
    """What <grad_x, xhat> must be, per position: <g, xhat> * eps / ((v + eps) * sigma).
    Stretching the centred x changes the output only through eps (zero without it)."""
    x, g = x.double(), grad_out.double() * weight.double()
    centered = x - x.mean(dim=-1, keepdim=True)
    variance = (centered * centered).mean(dim=-1, keepdim=True)
    sigma = torch.sqrt(variance + eps)
    xhat = centered / sigma
    return ((g * xhat).sum(dim=-1, keepdim=True) * eps / ((variance + eps) * sigma)).squeeze(-1), xhat


def judge_scale_direction(grad_x, grad_out, x, weight, eps):
    """<grad_x, xhat> per position equals <g, xhat> eps / ((v + eps) sigma): nearly 0 when v >> eps."""
    problem = _tensor_problem(grad_x, "grad_x")
    if problem:
        return problem
    expected, xhat = scale_leak(grad_out, x, weight, eps)
    if grad_x.shape != xhat.shape:
        return judge_matches_autograd(grad_x, xhat, "grad_x")
    got = (grad_x.double() * xhat).sum(dim=-1)
    if not torch.allclose(got, expected, rtol=1e-6, atol=1e-9 * (1 + float(grad_x.double().abs().max()))):
        return ("沿 xhat 方向（把中心化的 x 拉长）LayerNorm 的输出只通过 eps 改变，所以 <grad_x, xhat> 应恰为 "
                "<g, xhat>·eps/((v+eps)·sigma)，v 远大于 eps 时几乎为 0。你的结果不满足：多半是漏掉或写错了"
                "“经过方差”的那一项 -xhat·mean(g·xhat)。",
                "along xhat (stretching the centred x) LayerNorm's output changes only through eps, so "
                "<grad_x, xhat> must be exactly <g, xhat>*eps/((v+eps)*sigma), almost 0 when v >> eps; yours is "
                "not: the term through the variance, -xhat*mean(g*xhat), is probably missing or wrong.")
    return None


def judge_gelu_slope_symmetry(slope, slope_mirrored):
    """g(u) - g(-u) = u gives g'(u) + g'(-u) = 1 (grad_out = 1)."""
    problem = _tensor_problem(slope, "gelu_backward")
    if problem:
        return problem
    if not (isinstance(slope_mirrored, torch.Tensor) and slope.shape == slope_mirrored.shape
            and torch.allclose((slope + slope_mirrored).double(), torch.ones_like(slope, dtype=torch.float64),
                               **TOLERANCE)):
        return ("GELU 的导数应满足 g'(u) + g'(-u) = 1（对 g(u) - g(-u) = u 两边求导）。"
                "不满足多半是乘积法则用错了：(u·Phi(u))' = Phi(u) + u·phi(u)，第二项里有 u。",
                "the GELU derivative must satisfy g'(u) + g'(-u) = 1 (differentiate g(u) - g(-u) = u); the "
                "product rule is probably wrong: (u Phi(u))' = Phi(u) + u phi(u), with u in the second term.")
    return None


def judge_parameter_shapes(grads, shapes):
    """Each gradient has its parameter's shape: {name: gradient} against {name: shape}."""
    for name, shape in shapes.items():
        got = grads.get(name) if isinstance(grads, dict) else None
        if not isinstance(got, torch.Tensor) or tuple(got.shape) != tuple(shape):
            described = tuple(got.shape) if isinstance(got, torch.Tensor) else type(got).__name__
            return (f"{name} 的梯度（{described}）应与参数同形 {tuple(shape)}：权重 [out, in]，偏置 [out]，"
                    "都要对所有前导轴（批量、时间）求和。",
                    f"the gradient of {name} ({described}) must have the parameter's shape {tuple(shape)}: weight "
                    "[out, in], bias [out], each summed over every leading axis (batch, time).")
    return None


def judge_keys(grads):
    keys = sorted(grads) if isinstance(grads, dict) else grads
    if keys != sorted(SUBLAYER_KEYS):
        return (f"grads 的键应恰好是 {', '.join(SUBLAYER_KEYS)}；你给的是 {keys}。",
                f"grads must have exactly the keys {', '.join(SUBLAYER_KEYS)}; yours are {keys}.")
    return None


def judge_cancellation(grad):
    """R(x) = -x: y = x + R(x) = 0 everywhere, so its gradient is exactly 0."""
    problem = _tensor_problem(grad, "grad_x")
    if problem:
        return problem
    if not torch.equal(grad, torch.zeros_like(grad)):
        return ("分支 R(x) = -x 时 y = x + R(x) 恒为 0，梯度应严格为 0：恒等项 grad_out 与分支项 -grad_out 相加抵消。"
                "不为 0 说明丢了其中一项（两项是相加，不是二选一）。",
                "with the branch R(x) = -x, y = x + R(x) is identically 0 and its gradient is exactly 0: the "
                "identity term grad_out and the branch term -grad_out cancel. A non-zero result drops one of them "
                "(the two are added, not chosen between).")
    return None


# --- the autograd witnesses (used by these checks and by the grader's properties) ---------


def autograd_layer_norm(grad_out, x, weight, eps):
    x, weight = x.double().clone().requires_grad_(), weight.double().clone().requires_grad_()
    bias = torch.zeros_like(weight, requires_grad=True)
    with torch.enable_grad():
        centered = x - x.mean(dim=-1, keepdim=True)
        y = centered / torch.sqrt((centered * centered).mean(dim=-1, keepdim=True) + eps) * weight + bias
        return torch.autograd.grad(y, (x, weight, bias), grad_out.double())


def autograd_gelu(grad_out, x):
    x = x.double().clone().requires_grad_()
    with torch.enable_grad():
        y = 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))
        return torch.autograd.grad(y, x, grad_out.double())[0]


def autograd_linear(grad_out, x, weight):
    x, weight = x.double().clone().requires_grad_(), weight.double().clone().requires_grad_()
    bias = torch.zeros(weight.shape[0], dtype=torch.float64, requires_grad=True)
    with torch.enable_grad():
        y = x @ weight.transpose(0, 1) + bias
        return torch.autograd.grad(y, (x, weight, bias), grad_out.double())


# --- checks you run in the notebook ------------------------------------------------------


def _backward():
    from hero_transformer import backward

    return backward


def _gradcheck(function, inputs, what):
    """torch.autograd.gradcheck of a Function whose backward is yours, as a readable failure."""
    try:
        torch.autograd.gradcheck(function, inputs, eps=1e-6, atol=1e-6, rtol=1e-4, raise_exception=True)
    except NotImplementedError:
        raise
    except Exception as exc:  # GradcheckError (a RuntimeError) or a shape error inside your backward
        raise AssertionError(f"gradcheck：{what} 的反向与有限差分不一致。\n"
                             f"(gradcheck: {what}'s backward disagrees with finite differences: "
                             f"{str(exc).splitlines()[0][:300]})") from None


class _LayerNormWithYourBackward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias):
        ctx.save_for_backward(x, weight)
        centered = x - x.mean(dim=-1, keepdim=True)
        return centered / torch.sqrt((centered * centered).mean(dim=-1, keepdim=True) + 1e-5) * weight + bias

    @staticmethod
    def backward(ctx, grad_out):
        x, weight = ctx.saved_tensors
        return _backward().layer_norm_backward(grad_out, x, weight, 1e-5)


class _GeluWithYourBackward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return _backward().gelu_backward(grad_out, x)


class _LinearWithYourBackward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias):
        ctx.save_for_backward(x, weight)
        return x @ weight.transpose(0, 1) + bias

    @staticmethod
    def backward(ctx, grad_out):
        x, weight = ctx.saved_tensors
        return _backward().linear_backward(grad_out, x, weight)


def _double(*shape):
    return torch.randn(*shape, dtype=torch.float64)


@visible_check("layer_norm_backward", module=MODULE, target="layer_norm_backward")
def check_layer_norm_backward():
    backward = _backward()
    torch.manual_seed(0)
    x, weight, grad_out = 2 * _double(2, 3, 4) + 1, 1 + 0.5 * _double(4), _double(2, 3, 4)  # T = 3 != d = 4
    got = backward.layer_norm_backward(grad_out, x, weight)
    if not (isinstance(got, tuple) and len(got) == 3):
        raise AssertionError("layer_norm_backward 应返回 (grad_x, grad_weight, grad_bias) 三个张量。\n"
                             "(layer_norm_backward returns (grad_x, grad_weight, grad_bias).)")
    for mine, theirs, name in zip(got, autograd_layer_norm(grad_out, x, weight, 1e-5),
                                  ("grad_x", "grad_weight", "grad_bias")):
        _raise_if(judge_matches_autograd(mine, theirs, name))
    _raise_if(judge_rows_sum_to_zero(got[0]))
    _raise_if(judge_scale_direction(got[0], grad_out, x, weight, 1e-5))
    _gradcheck(_LayerNormWithYourBackward.apply, (_double(3, 4).requires_grad_(), (1 + _double(4)).requires_grad_(),
                                                  _double(4).requires_grad_()), "LayerNorm")
    _passed("layer_norm_backward：与 autograd 一致，grad_x 各行和为 0，<grad_x, xhat> 只剩 eps 项，gradcheck 通过")


@visible_check("gelu_backward", module=MODULE, target="gelu_backward")
def check_gelu_backward():
    backward = _backward()
    torch.manual_seed(0)
    x, grad_out = 2 * _double(2, 3, 4), _double(2, 3, 4)
    _raise_if(judge_matches_autograd(backward.gelu_backward(grad_out, x), autograd_gelu(grad_out, x), "grad_x"))
    u = torch.tensor([0.3, 1.0, 2.5], dtype=torch.float64)
    ones = torch.ones_like(u)
    _raise_if(judge_gelu_slope_symmetry(backward.gelu_backward(ones, u), backward.gelu_backward(ones, -u)))
    _gradcheck(_GeluWithYourBackward.apply, (_double(5).requires_grad_(),), "GELU")
    _passed("gelu_backward：与 autograd 一致，g'(u) + g'(-u) = 1，gradcheck 通过")


@visible_check("linear_backward", module=MODULE, target="linear_backward")
def check_linear_backward():
    backward = _backward()
    torch.manual_seed(0)
    x, weight, grad_out = _double(2, 3, 4), _double(5, 4), _double(2, 3, 5)  # in = 4, out = 5, T = 3
    got = backward.linear_backward(grad_out, x, weight)
    if not (isinstance(got, tuple) and len(got) == 3):
        raise AssertionError("linear_backward 应返回 (grad_x, grad_weight, grad_bias) 三个张量。\n"
                             "(linear_backward returns (grad_x, grad_weight, grad_bias).)")
    _raise_if(judge_parameter_shapes({"grad_weight": got[1], "grad_bias": got[2]},
                                     {"grad_weight": weight.shape, "grad_bias": (5,)}))
    for mine, theirs, name in zip(got, autograd_linear(grad_out, x, weight), ("grad_x", "grad_weight", "grad_bias")):
        _raise_if(judge_matches_autograd(mine, theirs, name))
    _gradcheck(_LinearWithYourBackward.apply, (_double(2, 3).requires_grad_(), _double(4, 3).requires_grad_(),
                                               _double(4).requires_grad_()), "Linear")
    _passed("linear_backward：形状 [out, in] 与 [out]，与 autograd 一致，gradcheck 通过")


@visible_check("residual_backward", module=MODULE, target="residual_backward")
def check_residual_backward():
    backward = _backward()
    torch.manual_seed(0)
    grad_out = _double(2, 3, 4)
    _raise_if(judge_cancellation(backward.residual_backward(grad_out, lambda g: -g)))
    x = _double(2, 3, 4)  # R(x) = sin(x), whose backward is g * cos(x)
    got = backward.residual_backward(grad_out, lambda g: g * torch.cos(x))
    witness = x.clone().requires_grad_()
    expected = torch.autograd.grad(witness + torch.sin(witness), witness, grad_out)[0]
    _raise_if(judge_matches_autograd(got, expected, "grad_x"))
    _passed("residual_backward：R(x) = -x 时严格为 0，x + sin(x) 与 autograd 一致")


# --- the sublayer check's doubles: the four backwards it calls by name ---------------------
# Each is the exact backward of a DIFFERENT function (so none is the exercise it stands in for), and
# the witness is autograd through ops whose forward is the real one and whose backward is the double:
# what your sublayer must give when it calls the four by name, whatever state they are in.


def affine_backward(grad_out, x, weight, eps=1e-5):
    """layer_norm_backward's double: the backward of y = (1 + eps) x * weight + bias (no normalising;
    eps in it, so the check sees that LN's own eps is passed on)."""
    width = x.shape[-1]
    return ((1 + eps) * grad_out * weight, (1 + eps) * (grad_out * x).reshape(-1, width).sum(dim=0),
            grad_out.reshape(-1, width).sum(dim=0))


def tanh_backward(grad_out, x):
    """gelu_backward's double: the backward of tanh."""
    return grad_out * (1 - torch.tanh(x) ** 2)


def sine_linear_backward(grad_out, x, weight):
    """linear_backward's double: the backward of y = sin(x) W^T + b."""
    flat = grad_out.reshape(-1, grad_out.shape[-1])
    return ((grad_out @ weight) * torch.cos(x), flat.transpose(0, 1) @ torch.sin(x).reshape(-1, x.shape[-1]),
            flat.sum(dim=0))


def subtracting_residual_backward(grad_out, branch_backward):
    """residual_backward's double: the backward of y = x - R(x)."""
    return grad_out - branch_backward(grad_out)


SUBLAYER_DOUBLES = {"layer_norm_backward": affine_backward, "gelu_backward": tanh_backward,
                    "linear_backward": sine_linear_backward, "residual_backward": subtracting_residual_backward}


def _op(forward, backward):
    """An autograd op: `forward` going forward, the double `backward` going back."""
    class Op(torch.autograd.Function):
        @staticmethod
        def forward(ctx, *inputs):
            ctx.save_for_backward(*inputs)
            return forward(*inputs)

        @staticmethod
        def backward(ctx, grad):
            return backward(grad, *ctx.saved_tensors)

    return Op.apply


def sublayer_witness(grad_out, u, ln, ffn):
    """(grad_u, {name: gradient}) of Y = U + FFN(LN2(U)) with the four backwards replaced by the doubles."""
    def layer_norm(x, weight, bias):
        centered = x - x.mean(dim=-1, keepdim=True)
        return centered / torch.sqrt((centered * centered).mean(dim=-1, keepdim=True) + ln.eps) * weight + bias

    norm = _op(layer_norm, lambda g, x, weight, bias: affine_backward(g, x, weight, ln.eps))
    linear = _op(lambda x, weight, bias: x @ weight.transpose(0, 1) + bias,
                 lambda g, x, weight, bias: sine_linear_backward(g, x, weight))
    activation = _op(lambda x: 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0))), tanh_backward)
    leaves = [t.detach().clone().requires_grad_() for t in (u, ln.weight, ln.bias, ffn.fc1.weight, ffn.fc1.bias,
                                                           ffn.fc2.weight, ffn.fc2.bias)]
    x, gamma, beta, w1, b1, w2, b2 = leaves
    with torch.enable_grad():
        branch = linear(activation(linear(norm(x, gamma, beta), w1, b1)), w2, b2)
        grad_x, *grads = torch.autograd.grad(branch, leaves, grad_out)
    return subtracting_residual_backward(grad_out, lambda g: grad_x), dict(zip(SUBLAYER_KEYS, grads))


def judge_with_doubles(problem):
    """A gradient judge's words, with what this check replaced: the four backwards called by name."""
    if problem is None:
        return None
    return (problem[0] + "（这个检查把 layer_norm_backward、gelu_backward、linear_backward、residual_backward 换成了"
            "替身，各是另一个函数的正确反向：你的子层要按名字调用它们，把 LN 自己的 eps 交给 layer_norm_backward，"
            "并在 residual_backward 的 branch_backward 里完成整条分支）",
            problem[1] + " (this check replaces layer_norm_backward, gelu_backward, linear_backward and "
            "residual_backward by doubles, each the correct backward of another function: call them by name, pass "
            "LN's own eps to layer_norm_backward, and run the whole branch inside residual_backward's "
            "branch_backward)")


@visible_check("feedforward_sublayer_backward", module=MODULE, target="feedforward_sublayer_backward")
def check_feedforward_sublayer_backward():
    from hero_transformer import model

    backward = _backward()
    torch.manual_seed(0)
    cfg = model.Config(vocab_size=10, block_size=6, d_model=4, n_heads=2, n_layers=1, d_ff=8, dropout=0.0)
    ln, ffn = model.LayerNorm(4, eps=0.25).double(), model.FeedForward(cfg).double().eval()  # eps: its own
    with torch.no_grad():
        ln.weight.add_(0.3 * torch.randn(4, dtype=torch.float64))
        ln.bias.add_(0.3 * torch.randn(4, dtype=torch.float64))
    u, grad_out = _double(2, 3, 4), _double(2, 3, 4)
    with standing_in(backward, **SUBLAYER_DOUBLES):
        grad_u, grads = backward.feedforward_sublayer_backward(grad_out, u, ln, ffn)
    _raise_if(judge_keys(grads))
    parameters = {"ln.weight": ln.weight, "ln.bias": ln.bias, "fc1.weight": ffn.fc1.weight, "fc1.bias": ffn.fc1.bias,
                  "fc2.weight": ffn.fc2.weight, "fc2.bias": ffn.fc2.bias}
    _raise_if(judge_parameter_shapes(grads, {name: p.shape for name, p in parameters.items()}))
    expected_u, expected = sublayer_witness(grad_out, u, ln, ffn)
    _raise_if(judge_with_doubles(judge_matches_autograd(grad_u, expected_u, "grad_u")))
    for name in SUBLAYER_KEYS:
        _raise_if(judge_with_doubles(judge_matches_autograd(grads[name], expected[name], name)))
    _passed("feedforward_sublayer_backward：六个参数梯度的键与形状；四个反向换成替身时，grad_u 与各参数梯度都与 "
            "autograd 一致（本章另外四个练习用的是替身）")


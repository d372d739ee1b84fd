"""The answer cells of chapter 6: what each asks, its expected value and the known mistakes its
feedback can name.

The notebook walks through its own numbers (seed 000's worked example 1 at x = (1, 3), its
Jacobian and autograd's; GELU's slope at +-alpha; the R(x) = -x cancellation; LayerNorm's
gradient at x = (1, 3) summing to 0 and meeting xhat only through eps), computed and asserted in
given cells.  Each graded answer asks for the same calculation on inputs the walkthrough does
not use, so its value is written nowhere in the student's notebook (tests/test_ch06_backward.py
proves it).  Expected values are computed here from the reference backward.py, in float64, never
typed in; a mistake's value is computed the way the mistake computes it.
"""

import math

import torch

from autograder.reference import load
from autograder.registry import Answer, Mistake

# --- the questions' inputs (the notebook states them in its own words) -----------------

LINEAR_X = ((1.0, 0.0, 2.0), (-1.0, 3.0, 1.0))  # two positions, in = 3
LINEAR_GRAD = ((1.0, -2.0), (0.5, 1.0))  # their upstream gradients, out = 2
GELU_POINT = -0.8
LN_INPUT, LN_GRAD = (2.0, -1.0, 0.0, 3.0), (1.0, 0.0, 0.0, 0.0)
LEAK_INPUT, LEAK_GRAD = (1.0, 1.002, 1.004), (0.0, 0.0, 1.0)  # v below eps: the eps term is large
RESIDUAL_POINT = 0.5  # R(x) = -tanh(x)
JACOBIAN_INPUT = (-1.0, 0.0, 2.0)  # d = f = 3, W1 = I, W2 = I/2, zero biases


def _vector(values):
    return torch.tensor(values, dtype=torch.float64)


def _linear_grad_weight(m, transposed=False, first_only=False):
    x, grad = _vector(LINEAR_X), _vector(LINEAR_GRAD)
    if first_only:
        x, grad = x[:1], grad[:1]
    _, grad_weight, _ = m.linear_backward(grad, x, torch.zeros(2, 3, dtype=torch.float64))
    return (grad_weight.T if transposed else grad_weight).reshape(-1).tolist()


def _gelu_slope(m):
    return m.gelu_backward(_vector(1.0), _vector(GELU_POINT)).item()


def _normal_cdf(u):
    return 0.5 * (1.0 + math.erf(u / math.sqrt(2.0)))


def _normal_density(u):
    return math.exp(-u * u / 2) / math.sqrt(2 * math.pi)


def _ln_parts(values, eps):
    x = _vector(values)
    centered = x - x.mean()
    sigma = torch.sqrt(centered.pow(2).mean() + eps)
    return centered / sigma, sigma


def _ln_grad_x(m, direct_only=False, no_variance_term=False):
    grad = _vector(LN_GRAD)
    if direct_only or no_variance_term:
        xhat, sigma = _ln_parts(LN_INPUT, m.EPS)
        return ((grad if direct_only else grad - grad.mean()) / sigma).tolist()
    return m.layer_norm_backward(grad, _vector(LN_INPUT), torch.ones(4, dtype=torch.float64))[0].tolist()


def _scale_leak(m, no_variance_term=False):
    grad = _vector(LEAK_GRAD)
    xhat, sigma = _ln_parts(LEAK_INPUT, m.EPS)
    if no_variance_term:
        grad_x = (grad - grad.mean()) / sigma
    else:
        grad_x = m.layer_norm_backward(grad, _vector(LEAK_INPUT), torch.ones(3, dtype=torch.float64))[0]
    return torch.dot(grad_x, xhat).item()


def _residual_slope(m, identity=True, branch=True):
    slope_of_branch = -(1.0 - math.tanh(RESIDUAL_POINT) ** 2)  # R(x) = -tanh(x)
    if identity and branch:
        return m.residual_backward(_vector(1.0), lambda g: g * slope_of_branch).item()
    return 1.0 if identity else slope_of_branch


def _jacobian(m, transposed=False, minus_identity=False):
    model = load("model")
    width = len(JACOBIAN_INPUT)
    cfg = model.Config(vocab_size=1, block_size=1, d_model=width, n_heads=1, n_layers=1, d_ff=width, dropout=0.0)
    ln, ffn = model.LayerNorm(width).double(), model.FeedForward(cfg).double()
    with torch.no_grad():
        ffn.fc1.weight.copy_(torch.eye(width))
        ffn.fc2.weight.copy_(0.5 * torch.eye(width))
        ffn.fc1.bias.zero_()
        ffn.fc2.bias.zero_()
    eye = torch.eye(width, dtype=torch.float64)
    # row i of the Jacobian is the gradient of y_i: the upstream gradient e_i
    rows = torch.stack([m.feedforward_sublayer_backward(eye[i], _vector(JACOBIAN_INPUT), ln, ffn)[0]
                        for i in range(width)])
    if minus_identity:
        rows = rows - eye
    return (rows.T if transposed else rows).reshape(-1).tolist()


NO_VARIANCE_TERM = ("这是漏掉“经过方差”那一项的结果 (g - mean(g))/sigma；sigma 也随 x 变化，请补上 -xhat·mean(g·xhat)。",
                    "this is the result without the term through the variance, (g - mean(g))/sigma; sigma changes "
                    "with x too: add -xhat*mean(g*xhat).")

ANSWERS = (
    Answer("linear_grad_weight", "linear_grad_weight", "两个位置的线性层权重梯度 dW（按行展平）",
           "the linear layer's weight gradient dW over two positions (flattened by rows)",
           lambda m: _linear_grad_weight(m), module="backward",
           mistakes=(
               Mistake(lambda m: _linear_grad_weight(m, transposed=True),
                       "这是 X^T·dY（形状 [in, out]）按行展平的结果；存储约定下 dW = dY^T·X，形状 [out, in] = [2, 3]。",
                       "this is X^T dY (shape [in, out]) flattened by rows; in the storage convention dW = dY^T X, "
                       "of shape [out, in] = [2, 3]."),
               Mistake(lambda m: _linear_grad_weight(m, first_only=True),
                       "这只用了第一个位置；同一个权重作用于每个位置，所有位置的 dY^T·X 都要累加。",
                       "this uses the first position only; the same weight acts at every position, so every "
                       "position's dY^T X adds up."),
           )),
    Answer("gelu_slope", "gelu_slope", "精确 GELU 在 u = -0.8 处的导数", "the exact GELU's derivative at u = -0.8",
           lambda m: _gelu_slope(m), module="backward",
           mistakes=(
               Mistake(lambda m: _normal_cdf(GELU_POINT),
                       "这只是 Phi(u)；g(u) = u·Phi(u) 是乘积，导数还有 u·phi(u) 一项。",
                       "this is Phi(u) alone; g(u) = u*Phi(u) is a product, and its derivative has the term "
                       "u*phi(u) too."),
               Mistake(lambda m: _normal_cdf(GELU_POINT) + _normal_density(GELU_POINT),
                       "这是 Phi(u) + phi(u)：乘积法则的第二项是 u·phi(u)，u = -0.8 时它是负的。",
                       "this is Phi(u) + phi(u): the product rule's second term is u*phi(u), negative at u = -0.8."),
           )),
    Answer("ln_grad_x", "ln_grad_x", "x = (2, -1, 0, 3)、上游梯度 (1, 0, 0, 0) 时 LayerNorm 的 grad_x",
           "LayerNorm's grad_x for x = (2, -1, 0, 3) and upstream gradient (1, 0, 0, 0)",
           lambda m: _ln_grad_x(m), module="backward",
           mistakes=(
               Mistake(lambda m: _ln_grad_x(m, direct_only=True),
                       "这只是直接项 g/sigma；均值和方差也依赖每个 x_j，三项都要算（结果各坐标之和应为 0）。",
                       "this is the direct term g/sigma alone; the mean and the variance depend on every x_j too, "
                       "and all three terms count (the coordinates must sum to 0)."),
               Mistake(lambda m: _ln_grad_x(m, no_variance_term=True), *NO_VARIANCE_TERM),
           )),
    Answer("ln_scale_leak", "ln_scale_leak", "近似常量向量 (1, 1.002, 1.004) 上 <grad_x, xhat> 的值",
           "<grad_x, xhat> on the near-constant vector (1, 1.002, 1.004)",
           lambda m: _scale_leak(m), module="backward",
           mistakes=(
               Mistake(lambda m: 0.0,
                       "只有 eps = 0 时 LayerNorm 才严格尺度不变；这里 v 比 eps 还小，<grad_x, xhat> = "
                       "<g, xhat>·eps/((v+eps)·sigma) 远不是 0。",
                       "LayerNorm is exactly scale invariant only with eps = 0; here v is below eps, and "
                       "<grad_x, xhat> = <g, xhat>*eps/((v+eps)*sigma) is far from 0."),
               Mistake(lambda m: _scale_leak(m, no_variance_term=True), *NO_VARIANCE_TERM),
           )),
    Answer("residual_slope", "residual_slope", "R(x) = -tanh(x) 时 y = x + R(x) 在 x = 0.5 处的导数",
           "the derivative of y = x + R(x) at x = 0.5 for R(x) = -tanh(x)",
           lambda m: _residual_slope(m), module="backward",
           mistakes=(
               Mistake(lambda m: _residual_slope(m, identity=False),
                       "这只是分支 R 的导数；残差的导数是 1 + R'(x)，恒等项不能丢。",
                       "this is the branch's derivative alone; the residual's derivative is 1 + R'(x), and the "
                       "identity term stays."),
               Mistake(lambda m: _residual_slope(m, branch=False),
                       "这只是恒等项 1；分支的导数 R'(x) 也要加上（两项相加，可以部分抵消）。",
                       "this is the identity term 1 alone; the branch's derivative R'(x) is added too (the two "
                       "can partly cancel)."),
           )),
    Answer("sublayer_jacobian", "sublayer_jacobian", "算例：x = (-1, 0, 2) 时 y = x + FFN(LN(x)) 的雅可比（按行展平）",
           "worked example: the Jacobian of y = x + FFN(LN(x)) at x = (-1, 0, 2) (flattened by rows)",
           lambda m: _jacobian(m), module="backward",
           mistakes=(
               Mistake(lambda m: _jacobian(m, minus_identity=True),
                       "这是分支的雅可比 J_R；y = x + R(x) 的雅可比是 I + J_R，对角线上还要加 1。",
                       "this is the branch's Jacobian J_R; the Jacobian of y = x + R(x) is I + J_R: add 1 on the "
                       "diagonal."),
               Mistake(lambda m: _jacobian(m, transposed=True),
                       "行列颠倒了：第 i 行第 j 列是 dy_i/dx_j，即上游梯度取 e_i 时得到的 grad_x 是第 i 行。",
                       "rows and columns are swapped: row i, column j is dy_i/dx_j, so the grad_x for the upstream "
                       "gradient e_i is row i."),
           )),
)

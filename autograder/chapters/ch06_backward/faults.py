"""Known misconceptions of chapter 6, each written as a faulty exercise body.

One catalogue serves two purposes:
- diagnosis: when a student's outputs match a fault's outputs on the hidden cases, the feedback
  names that misconception;
- samples: `hero samples OUT` writes one faulty sample submission per fault (reference
  everywhere else), and the tests prove each one loses points exactly on its exercise.

Each function has the signature of the exercise it replaces and uses only names that
backward.py itself has (math, torch, EPS and the chapter's own functions).
"""

import math  # noqa: F401  (used by fault bodies)

import torch  # noqa: F401

from autograder.registry import catalogue

CATALOGUE, fault = catalogue("fault")

EPS = 1e-5  # backward.py's name, for the default arguments below


# --- layer_norm_backward -----------------------------------------------------------


@fault("layer_norm_backward", "只保留了直接项 g/sigma：均值和方差也都依赖每个 x_j，经过它们的两条路径漏掉了。",
       "only the direct term g/sigma: the mean and the variance depend on every x_j too, and the two paths "
       "through them are missing.")
def direct_term_only(grad_out, x, weight, eps=EPS):
    centered = x - x.mean(dim=-1, keepdim=True)
    sigma = torch.sqrt((centered * centered).mean(dim=-1, keepdim=True) + eps)
    xhat = centered / sigma
    width = x.shape[-1]
    return (grad_out * weight / sigma, (grad_out * xhat).reshape(-1, width).sum(dim=0),
            grad_out.reshape(-1, width).sum(dim=0))


@fault("layer_norm_backward", "漏掉了经过方差的那一项 -xhat·mean(g·xhat)：sigma 也随 x 变化。",
       "the term through the variance, -xhat*mean(g*xhat), is missing: sigma changes with x too.")
def variance_term_missing(grad_out, x, weight, eps=EPS):
    centered = x - x.mean(dim=-1, keepdim=True)
    sigma = torch.sqrt((centered * centered).mean(dim=-1, keepdim=True) + eps)
    xhat = centered / sigma
    g = grad_out * weight
    width = x.shape[-1]
    return ((g - g.mean(dim=-1, keepdim=True)) / sigma, (grad_out * xhat).reshape(-1, width).sum(dim=0),
            grad_out.reshape(-1, width).sum(dim=0))


@fault("layer_norm_backward", "方差除以了 d-1（样本方差）；前向用人口方差（除以 d），反向必须用同一个 sigma。",
       "the variance is divided by d-1 (sample variance); the forward uses the population variance (divide by "
       "d), and the backward must use the same sigma.")
def sample_variance_sigma(grad_out, x, weight, eps=EPS):
    centered = x - x.mean(dim=-1, keepdim=True)
    sigma = torch.sqrt((centered * centered).sum(dim=-1, keepdim=True) / (x.shape[-1] - 1) + eps)
    xhat = centered / sigma
    g = grad_out * weight
    grad_x = (g - g.mean(dim=-1, keepdim=True) - xhat * (g * xhat).mean(dim=-1, keepdim=True)) / sigma
    width = x.shape[-1]
    return grad_x, (grad_out * xhat).reshape(-1, width).sum(dim=0), grad_out.reshape(-1, width).sum(dim=0)


@fault("layer_norm_backward", "eps 放在了平方根外面：sigma = sqrt(v + eps)，不是 sqrt(v) + eps。",
       "eps sits outside the square root: sigma = sqrt(v + eps), not sqrt(v) + eps.")
def eps_outside_root(grad_out, x, weight, eps=EPS):
    centered = x - x.mean(dim=-1, keepdim=True)
    sigma = torch.sqrt((centered * centered).mean(dim=-1, keepdim=True)) + eps
    xhat = centered / sigma
    g = grad_out * weight
    grad_x = (g - g.mean(dim=-1, keepdim=True) - xhat * (g * xhat).mean(dim=-1, keepdim=True)) / sigma
    width = x.shape[-1]
    return grad_x, (grad_out * xhat).reshape(-1, width).sum(dim=0), grad_out.reshape(-1, width).sum(dim=0)


@fault("layer_norm_backward", "grad_weight 用了原始输入 x：gamma 乘的是标准化后的 xhat，所以是 sum(grad_out·xhat)。",
       "grad_weight uses the raw input x: gamma multiplies the normalised xhat, so it is sum(grad_out * xhat).")
def weight_grad_from_raw_x(grad_out, x, weight, eps=EPS):
    centered = x - x.mean(dim=-1, keepdim=True)
    sigma = torch.sqrt((centered * centered).mean(dim=-1, keepdim=True) + eps)
    xhat = centered / sigma
    g = grad_out * weight
    grad_x = (g - g.mean(dim=-1, keepdim=True) - xhat * (g * xhat).mean(dim=-1, keepdim=True)) / sigma
    width = x.shape[-1]
    return grad_x, (grad_out * x).reshape(-1, width).sum(dim=0), grad_out.reshape(-1, width).sum(dim=0)


# --- gelu_backward -----------------------------------------------------------------


@fault("gelu_backward", "把 GELU 的导数当成了 Phi(x)：g(x) = x·Phi(x) 是乘积，还差 x·phi(x) 这一项。",
       "GELU's derivative taken as Phi(x): g(x) = x*Phi(x) is a product, and the term x*phi(x) is missing.")
def phi_only(grad_out, x):
    return grad_out * 0.5 * (1.0 + torch.erf(x / math.sqrt(2.0)))


@fault("gelu_backward", "乘积法则第二项漏了 x：(x·Phi(x))' = Phi(x) + x·phi(x)，不是 Phi(x) + phi(x)。",
       "the product rule's second term lost its x: (x*Phi(x))' = Phi(x) + x*phi(x), not Phi(x) + phi(x).")
def density_without_x(grad_out, x):
    cdf = 0.5 * (1.0 + torch.erf(x / math.sqrt(2.0)))
    return grad_out * (cdf + torch.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi))


@fault("gelu_backward", "这是 tanh 近似 GELU 的导数；本课程用精确（erf）GELU，反向也要对精确形式求导。",
       "this is the derivative of the tanh-approximate GELU; the course uses the exact (erf) GELU, and the "
       "backward differentiates that.")
def tanh_approximation(grad_out, x):
    k = math.sqrt(2.0 / math.pi)
    inner = k * (x + 0.044715 * x ** 3)
    t = torch.tanh(inner)
    return grad_out * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * k * (1.0 + 3 * 0.044715 * x * x))


# --- linear_backward ---------------------------------------------------------------


@fault("linear_backward", "dX 写成了 dY·W^T：存储矩阵是 [out, in]，y = x W^T，所以 dX = dY·W。",
       "dX written as dY W^T: the stored matrix is [out, in] and y = x W^T, so dX = dY W.")
def grad_x_transposed(grad_out, x, weight):
    flat_grad = grad_out.reshape(-1, grad_out.shape[-1])
    return (grad_out @ weight.transpose(0, 1), flat_grad.transpose(0, 1) @ x.reshape(-1, x.shape[-1]),
            flat_grad.sum(dim=0))


@fault("linear_backward", "dW 转置了（X^T·dY，形状 [in, out]）：梯度与存储的权重同形 [out, in]，是 dY^T·X。",
       "dW is transposed (X^T dY, shape [in, out]): the gradient has the stored weight's shape [out, in]: "
       "dY^T X.")
def grad_weight_transposed(grad_out, x, weight):
    flat_grad = grad_out.reshape(-1, grad_out.shape[-1])
    return grad_out @ weight, x.reshape(-1, x.shape[-1]).transpose(0, 1) @ flat_grad, flat_grad.sum(dim=0)


@fault("linear_backward", "db 只对批量轴求了和、没有对时间轴求和：同一个偏置加到了每个位置上，所有位置的梯度都要累加。",
       "db is summed over the batch axis but not over time: the same bias is added at every position, so "
       "every position's gradient accumulates.")
def bias_not_summed_over_time(grad_out, x, weight):
    flat_grad = grad_out.reshape(-1, grad_out.shape[-1])
    return grad_out @ weight, flat_grad.transpose(0, 1) @ x.reshape(-1, x.shape[-1]), grad_out.sum(dim=0)


# --- residual_backward -------------------------------------------------------------


@fault("residual_backward", "丢了恒等项：y = x + R(x) 的雅可比是 I + J_R，主路直接传回的 grad_out 也要加上。",
       "the identity term is dropped: the Jacobian of y = x + R(x) is I + J_R, and grad_out passed straight "
       "back along the main path must be added.")
def identity_dropped(grad_out, branch_backward):
    return branch_backward(grad_out)


@fault("residual_backward", "丢了分支项：恒等通路并不取代分支，两项相加（R(x) = -x 时正好相消为 0）。",
       "the branch term is dropped: the identity path does not replace the branch; the two are added (for "
       "R(x) = -x they cancel to 0).")
def branch_dropped(grad_out, branch_backward):
    return grad_out


# --- feedforward_sublayer_backward ---------------------------------------------------


@fault("feedforward_sublayer_backward", "LayerNorm 的反向在它的输出 z 处求值了：layer_norm_backward 要的是 LN2 的输入 U。",
       "LayerNorm's backward was evaluated at its output z: layer_norm_backward needs LN2's input U.")
def layer_norm_at_output(grad_out, u, ln, ffn):
    gamma, beta = ln.weight.detach(), ln.bias.detach()
    w1, b1, w2 = ffn.fc1.weight.detach(), ffn.fc1.bias.detach(), ffn.fc2.weight.detach()
    centered = u - u.mean(dim=-1, keepdim=True)
    z = centered / torch.sqrt((centered * centered).mean(dim=-1, keepdim=True) + ln.eps) * gamma + beta
    h = z @ w1.transpose(0, 1) + b1
    a = 0.5 * h * (1.0 + torch.erf(h / math.sqrt(2.0)))
    grads = {}

    def branch_backward(grad_y):
        grad_a, grads["fc2.weight"], grads["fc2.bias"] = linear_backward(grad_y, a, w2)
        grad_h = gelu_backward(grad_a, h)
        grad_z, grads["fc1.weight"], grads["fc1.bias"] = linear_backward(grad_h, z, w1)
        grad_branch, grads["ln.weight"], grads["ln.bias"] = layer_norm_backward(grad_z, z, gamma, ln.eps)
        return grad_branch

    return residual_backward(grad_out, branch_backward), grads


@fault("feedforward_sublayer_backward", "GELU 的导数在激活之后的 a = GELU(h) 处求值了：gelu_backward 要的是激活的输入 h。",
       "GELU's derivative was evaluated at a = GELU(h), after the activation: gelu_backward needs the "
       "activation's input h.")
def gelu_at_output(grad_out, u, ln, ffn):
    gamma, beta = ln.weight.detach(), ln.bias.detach()
    w1, b1, w2 = ffn.fc1.weight.detach(), ffn.fc1.bias.detach(), ffn.fc2.weight.detach()
    centered = u - u.mean(dim=-1, keepdim=True)
    z = centered / torch.sqrt((centered * centered).mean(dim=-1, keepdim=True) + ln.eps) * gamma + beta
    h = z @ w1.transpose(0, 1) + b1
    a = 0.5 * h * (1.0 + torch.erf(h / math.sqrt(2.0)))
    grads = {}

    def branch_backward(grad_y):
        grad_a, grads["fc2.weight"], grads["fc2.bias"] = linear_backward(grad_y, a, w2)
        grad_h = gelu_backward(grad_a, a)
        grad_z, grads["fc1.weight"], grads["fc1.bias"] = linear_backward(grad_h, z, w1)
        grad_branch, grads["ln.weight"], grads["ln.bias"] = layer_norm_backward(grad_z, u, gamma, ln.eps)
        return grad_branch

    return residual_backward(grad_out, branch_backward), grads


@fault("feedforward_sublayer_backward", "fc2 的权重梯度用了激活之前的 h：fc2 的输入是 a = GELU(h)，dW2 = dY^T·a。",
       "fc2's weight gradient uses h, before the activation: fc2's input is a = GELU(h), dW2 = dY^T a.")
def fc2_from_preactivation(grad_out, u, ln, ffn):
    gamma, beta = ln.weight.detach(), ln.bias.detach()
    w1, b1, w2 = ffn.fc1.weight.detach(), ffn.fc1.bias.detach(), ffn.fc2.weight.detach()
    centered = u - u.mean(dim=-1, keepdim=True)
    z = centered / torch.sqrt((centered * centered).mean(dim=-1, keepdim=True) + ln.eps) * gamma + beta
    h = z @ w1.transpose(0, 1) + b1
    grads = {}

    def branch_backward(grad_y):
        grad_a, grads["fc2.weight"], grads["fc2.bias"] = linear_backward(grad_y, h, w2)
        grad_h = gelu_backward(grad_a, h)
        grad_z, grads["fc1.weight"], grads["fc1.bias"] = linear_backward(grad_h, z, w1)
        grad_branch, grads["ln.weight"], grads["ln.bias"] = layer_norm_backward(grad_z, u, gamma, ln.eps)
        return grad_branch

    return residual_backward(grad_out, branch_backward), grads


@fault("feedforward_sublayer_backward", "没有经过 residual_backward：grad_u 只是分支的梯度，主路传回的恒等项丢了。",
       "residual_backward was skipped: grad_u is the branch's gradient alone, and the identity term from the "
       "main path is lost.")
def branch_only(grad_out, u, ln, ffn):
    gamma, beta = ln.weight.detach(), ln.bias.detach()
    w1, b1, w2 = ffn.fc1.weight.detach(), ffn.fc1.bias.detach(), ffn.fc2.weight.detach()
    centered = u - u.mean(dim=-1, keepdim=True)
    z = centered / torch.sqrt((centered * centered).mean(dim=-1, keepdim=True) + ln.eps) * gamma + beta
    h = z @ w1.transpose(0, 1) + b1
    a = 0.5 * h * (1.0 + torch.erf(h / math.sqrt(2.0)))
    grads = {}
    grad_a, grads["fc2.weight"], grads["fc2.bias"] = linear_backward(grad_out, a, w2)
    grad_h = gelu_backward(grad_a, h)
    grad_z, grads["fc1.weight"], grads["fc1.bias"] = linear_backward(grad_h, z, w1)
    grad_u, grads["ln.weight"], grads["ln.bias"] = layer_norm_backward(grad_z, u, gamma, ln.eps)
    return grad_u, grads


@fault("feedforward_sublayer_backward", "grads 的键用了块里的模块名（ln_feedforward.weight…）或别的名字；"
       "键必须恰好是 ln.weight、ln.bias、fc1.weight、fc1.bias、fc2.weight、fc2.bias。",
       "grads uses the block's module names (ln_feedforward.weight...) or other names; the keys must be exactly "
       "ln.weight, ln.bias, fc1.weight, fc1.bias, fc2.weight, fc2.bias.")
def block_names_as_keys(grad_out, u, ln, ffn):
    gamma, beta = ln.weight.detach(), ln.bias.detach()
    w1, b1, w2 = ffn.fc1.weight.detach(), ffn.fc1.bias.detach(), ffn.fc2.weight.detach()
    centered = u - u.mean(dim=-1, keepdim=True)
    z = centered / torch.sqrt((centered * centered).mean(dim=-1, keepdim=True) + ln.eps) * gamma + beta
    h = z @ w1.transpose(0, 1) + b1
    a = 0.5 * h * (1.0 + torch.erf(h / math.sqrt(2.0)))
    grads = {}

    def branch_backward(grad_y):
        grad_a, grads["feedforward.fc2.weight"], grads["feedforward.fc2.bias"] = linear_backward(grad_y, a, w2)
        grad_h = gelu_backward(grad_a, h)
        grad_z, grads["feedforward.fc1.weight"], grads["feedforward.fc1.bias"] = linear_backward(grad_h, z, w1)
        grad_branch, grads["ln_feedforward.weight"], grads["ln_feedforward.bias"] = layer_norm_backward(
            grad_z, u, gamma, ln.eps)
        return grad_branch

    return residual_backward(grad_out, branch_backward), grads


# --- the names a sublayer body calls ----------------------------------------------------
# A body of feedforward_sublayer_backward calls linear_backward, gelu_backward,
# layer_norm_backward and residual_backward by name, as the reference does: inside a sample's
# backward.py it finds that module's own; run here (the grader's diagnosis) it finds these
# proxies, which look up the reference module's attribute at call time, so the probes' test
# doubles, set on that module, are the ones called.


def linear_backward(grad_out, x, weight):
    return _reference().linear_backward(grad_out, x, weight)


def gelu_backward(grad_out, x):
    return _reference().gelu_backward(grad_out, x)


def layer_norm_backward(grad_out, x, weight, eps=EPS):
    return _reference().layer_norm_backward(grad_out, x, weight, eps)


def residual_backward(grad_out, branch_backward):
    return _reference().residual_backward(grad_out, branch_backward)


def _reference():
    from autograder.reference import load

    return load("backward")

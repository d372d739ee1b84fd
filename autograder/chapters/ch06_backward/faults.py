"""Known misconceptions of chapter 6, each a change of the reference body or a faulty body.

One catalogue serves two purposes:
- diagnosis: when a student's outputs match a fault's outputs on the hidden cases, the feedback
  names that misconception;
- samples: `hero samples OUT` writes one faulty sample submission per fault (reference
  everywhere else), and the tests prove each one loses points exactly on its exercise.

Most are `fault.change` edits of the reference body, whose function is bound to backward.py's
live globals (so the sublayer's calls reach the probes' test doubles).  The one whole function
is another derivative altogether; it has the signature of the exercise it replaces and uses
only names that backward.py itself has (math, torch).
"""

import math

import torch

from autograder.registry import catalogue

CATALOGUE, fault = catalogue("fault")


# --- layer_norm_backward -----------------------------------------------------------

GRAD_X = "grad_x = (g - g.mean(dim=-1, keepdim=True) - xhat * (g * xhat).mean(dim=-1, keepdim=True)) / sigma"

fault.change("layer_norm_backward", "direct_term_only",
             "只保留了直接项 g/sigma：均值和方差也都依赖每个 x_j，经过它们的两条路径漏掉了。",
             "only the direct term g/sigma: the mean and the variance depend on every x_j too, and the two paths "
             "through them are missing.",
             (GRAD_X, "grad_x = g / sigma"))

fault.change("layer_norm_backward", "variance_from_moments",
             "方差用 E[x²] − E[x]² 算：输入远离 0 时两个大数相减，方差被抵消掉（float64 里 x 在 10⁸ 附近时相邻数的"
             "间隔是 2，方差只有 4 左右），σ 和三项式里的每一项都跟着错，甚至得到 NaN。先减去均值再平方。",
             "the variance computed as E[x^2] - E[x]^2: for inputs far from 0 the two large terms cancel (in float64 "
             "near x = 1e8 neighbouring values are 2 apart while the variance is about 4), so sigma and every term "
             "of the three-term form are off, or NaN. Subtract the mean first, then square.",
             ("sigma = torch.sqrt((centered * centered).mean(dim=-1, keepdim=True) + eps)",
              "mean = x.mean(dim=-1, keepdim=True)\n"
              "sigma = torch.sqrt((x * x).mean(dim=-1, keepdim=True) - mean * mean + eps)"))

fault.change("layer_norm_backward", "variance_term_missing",
             "漏掉了经过方差的那一项 -xhat·mean(g·xhat)：sigma 也随 x 变化。",
             "the term through the variance, -xhat*mean(g*xhat), is missing: sigma changes with x too.",
             (" - xhat * (g * xhat).mean(dim=-1, keepdim=True)", ""))

fault.change("layer_norm_backward", "sample_variance_sigma",
             "方差除以了 d-1（样本方差）；前向用人口方差（除以 d），反向必须用同一个 sigma。",
             "the variance is divided by d-1 (sample variance); the forward uses the population variance (divide by "
             "d), and the backward must use the same sigma.",
             ("(centered * centered).mean(dim=-1, keepdim=True)",
              "(centered * centered).sum(dim=-1, keepdim=True) / (x.shape[-1] - 1)"))

fault.change("layer_norm_backward", "eps_outside_root",
             "eps 放在了平方根外面：sigma = sqrt(v + eps)，不是 sqrt(v) + eps。",
             "eps sits outside the square root: sigma = sqrt(v + eps), not sqrt(v) + eps.",
             ("torch.sqrt((centered * centered).mean(dim=-1, keepdim=True) + eps)",
              "torch.sqrt((centered * centered).mean(dim=-1, keepdim=True)) + eps"))

fault.change("layer_norm_backward", "weight_grad_from_raw_x",
             "grad_weight 用了原始输入 x：gamma 乘的是标准化后的 xhat，所以是 sum(grad_out·xhat)。",
             "grad_weight uses the raw input x: gamma multiplies the normalised xhat, so it is sum(grad_out * xhat).",
             ("(grad_out * xhat).reshape", "(grad_out * x).reshape"))

# the given_eps case (eps = 1e-2) tells it apart: every other case uses the default
fault.change("layer_norm_backward", "default_eps_instead_of_argument",
             "用了默认的 EPS（1e-5），没有用调用者传入的 eps：sigma = sqrt(v + eps) 里的 eps 是参数 eps。",
             "the default EPS (1e-5) is used instead of the eps the caller passed: the eps in sigma = sqrt(v + eps) is "
             "the argument eps.",
             ("keepdim=True) + eps)", "keepdim=True) + EPS)"))


# --- gelu_backward -----------------------------------------------------------------

fault.change("gelu_backward", "phi_only",
             "你的导数只有 Phi(x)：g(x) = x·Phi(x) 是乘积，导数还有 x·phi(x) 这一项（在你的结果里它缺了或为 0）。",
             "your derivative is Phi(x) alone: g(x) = x*Phi(x) is a product, and its derivative also has the term "
             "x*phi(x) (missing, or zero, in your result).",
             ("grad_out * (cdf + x * density)", "grad_out * cdf"), observed=True)

fault.change("gelu_backward", "density_without_x",
             "乘积法则第二项漏了 x：(x·Phi(x))' = Phi(x) + x·phi(x)，不是 Phi(x) + phi(x)。",
             "the product rule's second term lost its x: (x*Phi(x))' = Phi(x) + x*phi(x), not Phi(x) + phi(x).",
             ("cdf + x * density", "cdf + density"))

# the local derivative multiplied into the upstream gradient itself: the result is right, grad_out is not
fault.change("gelu_backward", "upstream_scaled_in_place",
             "把局部导数原地乘进了 grad_out（mul_ 或 *=）：返回值没错，但上游传来的梯度被改写了；反向传播里同一个 "
             "grad_out 往往还要流向别的分支（比如残差的恒等路径），那里读到的就不对了。",
             "the local derivative multiplied into grad_out itself (mul_ or *=): the result is right, but the upstream "
             "gradient is overwritten, and in backpropagation the same grad_out often flows on to another branch (the "
             "residual's identity path), which then reads the wrong values.",
             ("return grad_out * (cdf + x * density)", "return grad_out.mul_(cdf + x * density)"))


# another function's derivative altogether, so written out whole
@fault("gelu_backward", "这是 tanh 近似 GELU 的导数；本课程用精确（erf）GELU，反向也要对精确形式求导。",
       "this is the derivative of the tanh-approximate GELU; the course uses the exact (erf) GELU, and the "
       "backward differentiates that.")
def tanh_approximation(grad_out, x):
    k = math.sqrt(2.0 / math.pi)
    inner = k * (x + 0.044715 * x ** 3)
    t = torch.tanh(inner)
    return grad_out * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * k * (1.0 + 3 * 0.044715 * x * x))


# --- linear_backward ---------------------------------------------------------------

fault.change("linear_backward", "grad_x_transposed",
             "dX 写成了 dY·W^T：存储矩阵是 [out, in]，y = x W^T，所以 dX = dY·W。",
             "dX written as dY W^T: the stored matrix is [out, in] and y = x W^T, so dX = dY W.",
             ("grad_x = grad_out @ weight", "grad_x = grad_out @ weight.transpose(0, 1)"))

fault.change("linear_backward", "grad_weight_transposed",
             "dW 转置了（X^T·dY，形状 [in, out]）：梯度与存储的权重同形 [out, in]，是 dY^T·X。",
             "dW is transposed (X^T dY, shape [in, out]): the gradient has the stored weight's shape [out, in]: "
             "dY^T X.",
             ("flat_grad.transpose(0, 1) @ flat_x", "flat_x.transpose(0, 1) @ flat_grad"))

fault.change("linear_backward", "bias_not_summed_over_time",
             "db 只对批量轴求了和、没有对时间轴求和：同一个偏置加到了每个位置上，所有位置的梯度都要累加。",
             "db is summed over the batch axis but not over time: the same bias is added at every position, so "
             "every position's gradient accumulates.",
             ("flat_grad.sum(dim=0)", "grad_out.sum(dim=0)"))


# --- residual_backward -------------------------------------------------------------

fault.change("residual_backward", "identity_dropped",
             "丢了恒等项：y = x + R(x) 的雅可比是 I + J_R，主路直接传回的 grad_out 也要加上。",
             "the identity term is dropped: the Jacobian of y = x + R(x) is I + J_R, and grad_out passed straight "
             "back along the main path must be added.",
             ("return grad_out + branch_backward(grad_out)", "return branch_backward(grad_out)"))

fault.change("residual_backward", "branch_dropped",
             "丢了分支项：恒等通路并不取代分支，两项相加（R(x) = -x 时正好相消为 0）。",
             "the branch term is dropped: the identity path does not replace the branch; the two are added (for "
             "R(x) = -x they cancel to 0).",
             ("return grad_out + branch_backward(grad_out)", "return grad_out"))

# the branch's gradient added into grad_out itself: the sum is right, the upstream gradient is not
fault.change("residual_backward", "summed_into_upstream",
             "把分支的梯度原地加进了 grad_out（add_ 或 +=）：和没错，但上游的 grad_out 被改写成了和；调用者若还要用"
             "它（比如再传给另一个分支），读到的已经不是原来的梯度。",
             "the branch's gradient added into grad_out itself (add_ or +=): the sum is right, but the upstream "
             "grad_out now holds the sum, and a caller that uses it again (for another branch) no longer reads the "
             "gradient it passed.",
             ("return grad_out + branch_backward(grad_out)", "return grad_out.add_(branch_backward(grad_out))"))

# the values are right: only the probe's count of calls shows it
fault.change("residual_backward", "calls_branch_backward_twice",
             "branch_backward 调用了两次：要求恰好调用一次，把它的结果存进一个变量再用。分支的反向可能很贵，"
             "子层的 branch_backward 每调用一次还会重写一遍参数梯度。",
             "branch_backward is called twice: it must be called exactly once; keep its result in a variable and "
             "use that.  A branch's backward can be costly, and the sublayer's rewrites its parameter gradients on "
             "every call.",
             ("return grad_out + branch_backward(grad_out)",
              "through_branch = branch_backward(grad_out)  # looked at, then computed again\n"
              "return grad_out + branch_backward(grad_out)"))


# --- feedforward_sublayer_backward ---------------------------------------------------
# A change's function is bound to backward.py's live globals, so the linear_backward...
# it calls by name are the probes' test doubles while a case runs.

LN_BACKWARD = 'layer_norm_backward(grad_z, u, gamma, ln.eps)'

fault.change("feedforward_sublayer_backward", "layer_norm_at_output",
             "LayerNorm 的反向在它的输出 z 处求值了：layer_norm_backward 要的是 LN2 的输入 U。",
             "LayerNorm's backward was evaluated at its output z: layer_norm_backward needs LN2's input U.",
             (LN_BACKWARD, "layer_norm_backward(grad_z, z, gamma, ln.eps)"))

fault.change("feedforward_sublayer_backward", "gelu_at_output",
             "GELU 的导数在激活之后的 a = GELU(h) 处求值了：gelu_backward 要的是激活的输入 h。",
             "GELU's derivative was evaluated at a = GELU(h), after the activation: gelu_backward needs the "
             "activation's input h.",
             ("gelu_backward(grad_a, h)", "gelu_backward(grad_a, a)"))

fault.change("feedforward_sublayer_backward", "fc2_from_preactivation",
             "fc2 的权重梯度用了激活之前的 h：fc2 的输入是 a = GELU(h)，dW2 = dY^T·a。",
             "fc2's weight gradient uses h, before the activation: fc2's input is a = GELU(h), dW2 = dY^T a.",
             ("linear_backward(grad_y, a, w2)", "linear_backward(grad_y, h, w2)"))

fault.change("feedforward_sublayer_backward", "branch_only",
             "没有经过 residual_backward：grad_u 只是分支的梯度，主路传回的恒等项丢了。",
             "residual_backward was skipped: grad_u is the branch's gradient alone, and the identity term from the "
             "main path is lost.",
             ("grad_u = residual_backward(grad_out, branch_backward)", "grad_u = branch_backward(grad_out)"))

# the same three assignments with the block's names: a renaming, not another algorithm
fault.change("feedforward_sublayer_backward", "block_names_as_keys",
             "grads 的键用了块里的模块名（ln_feedforward.weight…）或别的名字；"
             "键必须恰好是 ln.weight、ln.bias、fc1.weight、fc1.bias、fc2.weight、fc2.bias。",
             "grads uses the block's module names (ln_feedforward.weight...) or other names; the keys must be exactly "
             "ln.weight, ln.bias, fc1.weight, fc1.bias, fc2.weight, fc2.bias.",
             ('grads["fc2.weight"], grads["fc2.bias"]',
              'grads["feedforward.fc2.weight"], grads["feedforward.fc2.bias"]'),
             ('grads["fc1.weight"], grads["fc1.bias"]',
              'grads["feedforward.fc1.weight"], grads["feedforward.fc1.bias"]'),
             ('grads["ln.weight"], grads["ln.bias"]', 'grads["ln_feedforward.weight"], grads["ln_feedforward.bias"]'))

# the given_eps case (ln.eps = 0.5) tells these two apart from the reference and from each other
fault.change("feedforward_sublayer_backward", "default_eps_instead_of_ln_eps",
             "用了 1e-5 而不是 ln.eps：LayerNorm 的 eps 是模块自己的属性，重算 z 和调用 "
             "layer_norm_backward 时都要用 ln.eps。",
             "1e-5 is used instead of ln.eps: LayerNorm's eps is the module's own attribute; recomputing z and calling "
             "layer_norm_backward both use ln.eps.",
             ("keepdim=True) + ln.eps)", "keepdim=True) + EPS)"),
             (LN_BACKWARD, "layer_norm_backward(grad_z, u, gamma)"))

fault.change("feedforward_sublayer_backward", "ln_eps_not_passed",
             "调用 layer_norm_backward 时没有传 ln.eps：重算 z 用了 ln.eps，反向却用了默认的 "
             "1e-5，两处的 sigma 不一样。",
             "ln.eps is not passed to layer_norm_backward: z was recomputed with ln.eps, but the backward uses the default "
             "1e-5, so the two sigmas differ.",
             (LN_BACKWARD, "layer_norm_backward(grad_z, u, gamma)"))

# the doubled residual hands the branch 2 * grad_out: a branch that reads the sublayer's grad_out shows
fault.change("feedforward_sublayer_backward", "branch_ignores_its_argument",
             "分支函数没有用交给它的梯度，而是直接用了子层的 grad_out：branch_backward 把它收到的上游梯度变成对 x 的梯度，"
             "residual_backward 交给它什么，它就从什么算起。",
             "the branch function ignores the gradient it is handed and reads the sublayer's grad_out: branch_backward "
             "turns the upstream gradient it receives into the gradient with respect to x, whatever residual_backward "
             "hands it.",
             ("linear_backward(grad_y, a, w2)", "linear_backward(grad_out, a, w2)"))

# rebuilt from Python numbers: right on the CPU, on the CPU whatever the inputs' device (the meta case shows it)
fault.change("linear_backward", "bias_grad_rebuilt_from_numbers",
             "梯度没有留在输入所在的设备上：输入在 meta 设备（只有形状、没有数值）上时，你的代码从中读出了数值"
             "或把它搬到了 CPU（.tolist()、.item()、.cpu()、torch.tensor(.."
             ".)）。直接对 grad_out 求和。",
             "the gradients do not stay on their inputs' device: with inputs on the meta device (shapes, no values)"
             " your code read values out of them or moved them to the CPU (.tolist(), .item(), .cpu(),"
             " torch.tensor(...)). Sum grad_out directly.",
             ("flat_grad.sum(dim=0)", "torch.tensor(flat_grad.sum(dim=0).tolist(), dtype=grad_out.dtype)"), observed=True)

"""Known misconceptions of chapter 5, each written as a change of the reference body.

One catalogue serves two purposes:
- diagnosis: when a student's outputs match a fault's outputs on the hidden
  cases, the feedback names that misconception;
- samples: `hero samples OUT` writes one faulty sample submission per fault
  (reference everywhere else), and the tests prove each one loses points
  exactly on its exercise.

Most faults are the reference body with a line or two changed (`fault.change`,
each old text found once in the fenced body of hero_transformer/model.py); the
few written whole compute something else altogether (another activation, the
weights used by hand, another block), with only names that model.py itself has
(torch, math, F).
"""

import math  # noqa: F401  (used by fault bodies)

import torch  # noqa: F401
import torch.nn.functional as F  # noqa: F401

from autograder.registry import catalogue

CATALOGUE, fault = catalogue("fault")


# --- layer_norm ----------------------------------------------------------------

VARIANCE = "variance = (centered * centered).mean(dim=-1, keepdim=True)"

fault.change("layer_norm", "sample_variance", "方差除以了 d-1（样本方差）；LayerNorm 用人口方差，除以 d。",
             "variance divided by d-1 (sample variance); LayerNorm uses the population variance, divided by d.",
             (VARIANCE, "variance = x.var(dim=-1, keepdim=True, unbiased=True)"))

# the textbook identity Var = E[x^2] - E[x]^2, right in exact arithmetic, lost to cancellation in float32
fault.change("layer_norm", "variance_from_moments",
             "方差用 E[x²] − E[x]² 算：数学上没错，但输入远离 0 时两个大数相减，把方差抵消掉了（float64 里 x 在 10⁸ 附近时，"
             "x² 约 10¹⁶，相邻 float64 的间隔已是 2，而方差只有 4 左右），输出偏差很大，甚至开负数的平方根得到 NaN；"
             "float32 在 x 约 1000 时就会这样。先减去均值再平方。",
             "the variance computed as E[x^2] - E[x]^2: right in exact arithmetic, but for inputs far from 0 the two "
             "large terms cancel (in float64 with x near 1e8, x^2 is about 1e16, where float64 values are 2 apart, "
             "while the variance is about 4), so the output is far off, or the square root of a negative number gives "
             "NaN; float32 does this already near x = 1000. Subtract the mean first, then square.",
             (VARIANCE, "variance = (x * x).mean(dim=-1, keepdim=True) - mean * mean"))

fault.change("layer_norm", "eps_missing", "去掉了稳定常数 eps：方差为 0 的位置（如常量向量）会除以 0。",
             "eps was removed: a position with zero variance (a constant vector) divides by zero.",
             ("torch.sqrt(variance + self.eps)", "torch.sqrt(variance)"))

fault.change("layer_norm", "eps_outside_root", "eps 放在了平方根外面：应为 sqrt(v + eps)，而不是 sqrt(v) + eps。",
             "eps sits outside the square root: it is sqrt(v + eps), not sqrt(v) + eps.",
             ("torch.sqrt(variance + self.eps)", "(torch.sqrt(variance) + self.eps)"))

fault.change("layer_norm", "eps_too_large", "eps 取值过大（1e-2）；本课程冻结为 1e-5。",
             "eps is too large (1e-2); the course freezes it at 1e-5.",
             ("self.eps", "1e-2"))

fault.change("layer_norm", "across_time",
             "沿时间轴而不是特征轴做了归一化；统计应在每个位置的最后一维上计算，否则未来词元会进入统计。",
             "normalised across time instead of features; statistics belong to each position's last axis, "
             "otherwise future tokens leak into them.",
             ("x.mean(dim=-1", "x.mean(dim=-2"), ("centered).mean(dim=-1", "centered).mean(dim=-2"))

fault.change("layer_norm", "affine_swapped", "gamma 与 beta 用反了：先乘 gamma（weight）再加 beta（bias）。",
             "gamma and beta are swapped: multiply by gamma (weight), then add beta (bias).",
             ("* self.weight + self.bias", "* self.bias + self.weight"))

fault.change("layer_norm", "mean_not_subtracted",
             "分子忘了减均值：z = (x - mu) / sqrt(v + eps)，不是 x / sqrt(v + eps)；否则输出不再平移不变。",
             "the numerator forgets to subtract the mean: z = (x - mu) / sqrt(v + eps), not x / sqrt(v + eps); "
             "the output is then no longer shift invariant.",
             ("return centered /", "return x /"))

fault.change("layer_norm", "across_batch",
             "沿批量轴做了统计：每个位置的均值和方差只来自它自己的 d 个特征，不跨样本。",
             "statistics over the batch axis: each position's mean and variance come from its own d features only.",
             ("x.mean(dim=-1", "x.mean(dim=0"), ("centered).mean(dim=-1", "centered).mean(dim=0"))

fault.change("layer_norm", "affine_ignored",
             "忽略了 gamma（weight）和 beta（bias）：标准化之后还要乘 gamma、加 beta。",
             "gamma (weight) and beta (bias) are ignored: scale by gamma and shift by beta after normalising.",
             (" * self.weight + self.bias", ""))

fault.change("layer_norm", "eps_hardcoded",
             "eps 写成了常数 1e-5，没有读 self.eps：用别的 eps 构造的 LayerNorm 必须用它自己的 eps。",
             "eps is written as the constant 1e-5 instead of read from self.eps: a LayerNorm built with another eps "
             "must use its own.",
             ("self.eps", "1e-5"))

# gamma read off the graph: the values are right, no gradient ever reaches the parameter
fault.change("layer_norm", "gamma_detached",
             "乘 gamma 时用了 self.weight.detach()（或 .data）：输出的值没错，但反向传播时梯度到不了 gamma，训练永远不会"
             "改变它。参数要直接参与运算。",
             "gamma was used as self.weight.detach() (or .data): the output's values are right, but no gradient reaches "
             "gamma in backpropagation, so training never changes it. A parameter must take part in the computation "
             "itself.",
             ("* self.weight + self.bias", "* self.weight.detach() + self.bias"))

# centring written into the caller's x: the normalised values are right, the input is overwritten
fault.change("layer_norm", "centred_in_place",
             "减均值时对输入 x 本身做了原地操作（sub_ 或 -=）：返回值没错，但调用者的 x 被改写成了去均值后的值；"
             "块里的残差连接之后还要读这个 x。",
             "the mean subtracted in place from the input x itself (sub_ or -=): the returned values are right, but the "
             "caller's x now holds the centred values, and the block's residual connection reads that x afterwards.",
             ("centered = x - mean", "centered = x.sub_(mean)"))


# --- gelu ------------------------------------------------------------------------


@fault("gelu", "用了 tanh 近似的 GELU；本课程要求精确（erf）GELU。",
       "the tanh approximation of GELU; the course requires the exact (erf) GELU.")
def tanh_gelu(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


@fault("gelu", "写成了 ReLU：负输入应得到小的负值，而不是 0。对称检查 g(a)-g(-a)=a 对 ReLU 也成立，所以还要核对数值。",
       "this is ReLU: negative inputs give small negative values, not 0. ReLU passes the symmetry "
       "check g(a)-g(-a)=a too, so the values must be checked.")
def relu_instead(x):
    return torch.clamp(x, min=0.0)


@fault("gelu", "写成了 SiLU（x·sigmoid(x)）；GELU 是 x·Phi(x)，Phi 为标准正态分布函数。",
       "this is SiLU (x*sigmoid(x)); GELU is x*Phi(x) with Phi the standard normal CDF.")
def silu_instead(x):
    return x * torch.sigmoid(x)


# computed number by number in Python: the values are right, the result is cut from autograd's graph
@fault("gelu", "在 Python 循环里对每个数用 math.erf 算，再造一个新张量：值没错，但新张量与 x 之间没有计算图，梯度传不回去，"
              "GELU 之前的层都学不到东西（也慢得多）。用张量运算（torch.erf）整体计算。",
       "computed number by number in a Python loop with math.erf, then a new tensor built: the values are right, but "
       "the new tensor has no graph back to x, so no gradient flows through it and nothing before the GELU learns "
       "(and it is far slower). Compute it on the whole tensor (torch.erf).")
def gelu_outside_the_graph(x):
    values = [0.5 * v * (1.0 + math.erf(v / math.sqrt(2.0))) for v in x.flatten().tolist()]
    return torch.tensor(values, dtype=x.dtype, device=x.device).reshape(x.shape)


fault.change("gelu", "gelu_missing_one", "漏掉了 0.5·(1 + erf(x/√2)) 里的「1 +」：Phi(x) 是 0.5·(1 + erf(x/√2))。",
             "the '1 +' of 0.5*(1 + erf(x/sqrt(2))) is missing: Phi(x) = 0.5*(1 + erf(x/sqrt(2))).",
             ("(1.0 + torch.erf(x / math.sqrt(2.0)))", "torch.erf(x / math.sqrt(2.0))"))

# an in-place write into the argument: the values returned are right, the caller's x is not
fault.change("gelu", "gelu_in_place",
             "对输入 x 本身做了原地操作（mul_ 或 *=）：返回值没错，但调用者的 x 被改写了；在模型里它常常还要用于残差连接。",
             "an in-place operation on the input x itself (mul_ or *=): the returned values are right, but the caller's x "
             "is overwritten, and in a model it is often still needed (a residual connection).",
             ("return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))",
              "return x.mul_(0.5 * (1.0 + torch.erf(x / math.sqrt(2.0))))"))


# --- feedforward -------------------------------------------------------------------

BRANCH = "self.fc2(self.activation(self.fc1(x)))"

fault.change("feedforward", "no_activation", "两层之间没有非线性：两次线性映射可以合并为一次，扩宽再压回没有增加表达能力。",
             "no non-linearity between the layers: two linear maps collapse into one.",
             (BRANCH, "self.fc2(self.fc1(x))"))

fault.change("feedforward", "activation_after_fc2", "激活放错了位置：应为 fc2(GELU(fc1(x)))，而不是 GELU(fc2(fc1(x)))。",
             "the activation is in the wrong place: fc2(GELU(fc1(x))), not GELU(fc2(fc1(x))).",
             (BRANCH, "self.activation(self.fc2(self.fc1(x)))"))

fault.change("feedforward", "fc2_missing", "忘了第二个线性层 fc2：前馈要从宽度 f 投影回 d，输出形状应为 [B,T,d]。",
             "the second linear layer fc2 is missing: the FFN must project width f back to d, giving [B,T,d].",
             (BRANCH, "self.activation(self.fc1(x))"))

@fault("feedforward", "丢掉了 FFN 的偏置 b1、b2：两个 Linear 都带偏置。",
       "the FFN biases b1 and b2 were dropped: both Linear layers have biases.")
def ffn_biases_dropped(self, x):
    return self.dropout(F.linear(self.activation(F.linear(x, self.fc1.weight)), self.fc2.weight))


@fault("feedforward", "把存储矩阵 reshape 成数学形状，而不是转置：nn.Linear 的权重存为 [输出, 输入]，要乘它的转置。",
       "the stored weight was reshaped to the mathematical shape instead of transposed: nn.Linear stores "
       "[out, in], so multiply by its transpose.")
def storage_reshaped(self, x):
    hidden = x @ self.fc1.weight.reshape(x.shape[-1], -1) + self.fc1.bias
    return self.dropout(self.fc2(self.activation(hidden)))


@fault("feedforward", "用了 x @ W 而不是 x @ W.T：nn.Linear 的权重存为 [输出, 输入]，形状碰巧相容时也会算错。",
       "x @ W instead of x @ W.T: nn.Linear stores its weight as [out, in]; when the shapes happen to fit "
       "the values are still wrong.")
def storage_not_transposed(self, x):
    hidden = self.activation(x @ self.fc1.weight + self.fc1.bias)
    return self.dropout(hidden @ self.fc2.weight + self.fc2.bias)


fault.change("feedforward", "dropout_missing",
             "漏掉了 self.dropout：训练模式下 FFN 的输出要经过这一处 dropout（fc2 之后），评估模式下它才是恒等。",
             "self.dropout is missing: in training mode the FFN's output passes through this dropout (after fc2); "
             "only in evaluation mode is it the identity.",
             (f"self.dropout({BRANCH})", BRANCH))

fault.change("feedforward", "dropout_on_hidden",
             "dropout 放在了 fc2 之前（作用于宽度 f 的中间量）；本课程 FFN 的 dropout 在 fc2 之后：dropout(fc2(GELU(fc1(x))))。",
             "dropout was applied before fc2 (on the width-f hidden layer); the course's FFN dropout comes after fc2: "
             "dropout(fc2(GELU(fc1(x)))).",
             (f"self.dropout({BRANCH})", "self.fc2(self.dropout(self.activation(self.fc1(x))))"))

fault.change("feedforward", "activation_bypassed",
             "直接调用了 gelu(...)，没有经过 self.activation：FFN 的激活是模块 self.activation，按名字调用它。",
             "gelu(...) is called directly instead of going through self.activation: the FFN's activation is the "
             "module self.activation, called by name.",
             ("self.activation(self.fc1(x))", "gelu(self.fc1(x))"))


# --- block -------------------------------------------------------------------------

ATTEND = "attended, present = self.attention(self.ln_attention(hidden), past_key_value, use_cache)"
ADD_ATTENTION = "hidden = hidden + attended"
ADD_FEEDFORWARD = "hidden = hidden + self.feedforward(self.ln_feedforward(hidden))"
RETURN = "return hidden, present"


@fault("block", "写成了 post-LN（先相加再归一化）；本课程冻结为 pre-LN：U = X + Attn(LN1(X))，Y = U + FFN(LN2(U))。",
       "this is post-LN (normalise after the addition); the course freezes pre-LN: "
       "U = X + Attn(LN1(X)), Y = U + FFN(LN2(U)).")
def post_ln(self, hidden, past_key_value=None, use_cache=False):
    attended, present = self.attention(hidden, past_key_value, use_cache)
    hidden = self.ln_attention(hidden + attended)
    hidden = self.ln_feedforward(hidden + self.feedforward(hidden))
    return hidden, present


fault.change("block", "ln2_reads_x", "第二套 LayerNorm 读的是 X，而不是已经加上注意力增量的 U。",
             "the second LayerNorm reads X instead of U, the state that already holds the attention increment.",
             (ADD_ATTENTION, "state = hidden + attended"),
             (ADD_FEEDFORWARD, "hidden = state + self.feedforward(self.ln_feedforward(hidden))"))

# the residual added into the caller's tensor: the block's output is right, its input is overwritten
fault.change("block", "residual_in_place",
             "残差用 hidden += ... 原地相加：输出没错，但调用者传入的 X 被改写成了 U；上一层或调用者之后再读 X 就错了。"
             "写成 hidden = hidden + ...。",
             "the residual added in place with hidden += ...: the output is right, but the X the caller passed in is "
             "overwritten with U, and whoever reads X afterwards reads the wrong values. Write hidden = hidden + ....",
             ("hidden = hidden + attended", "hidden += attended"))

fault.change("block", "second_residual_in_place",
             "第二个残差用 hidden += ... 原地加到 U 上：前向的数值没错，但 ln_feedforward 为反向保存了 U，"
             "原地改写之后 backward 报错（modified by an inplace operation），模型训练不了。写成 hidden = hidden + ...。",
             "the second residual is added in place to U with hidden += ...: the forward values are right, but "
             "ln_feedforward saved U for its backward, so backward fails (modified by an inplace operation) and the "
             "model cannot train. Write hidden = hidden + ....",
             ("hidden = hidden + self.feedforward(self.ln_feedforward(hidden))",
              "hidden += self.feedforward(self.ln_feedforward(hidden))"))

fault.change("block", "broadcast_increment",
             "注意力增量被压成 [B,1,d] 再广播到所有位置；残差相加两端应同为 [B,T,d]，不能靠广播。",
             "the attention increment was squeezed to [B,1,d] and broadcast to every position; "
             "both sides of a residual addition must be [B,T,d].",
             (ADD_ATTENTION, "hidden = hidden + attended.mean(dim=1, keepdim=True)"))

fault.change("block", "ffn_residual_missing", "前馈分支缺少残差：Y 应为 U + FFN(LN2(U))，而不是 FFN(LN2(U))。",
             "the feed-forward branch lost its residual: Y = U + FFN(LN2(U)), not FFN(LN2(U)).",
             (ADD_FEEDFORWARD, "hidden = self.feedforward(self.ln_feedforward(hidden))"))

# said as observed: a body that never passes use_cache on to the attention returns the same None
fault.change("block", "present_dropped",
             "use_cache=True 时你返回的 present 是 None：forward 要把 use_cache 交给注意力，并原样返回它给出的 present"
             "（KV cache），即 (hidden, present)。",
             "with use_cache=True your present is None: forward hands use_cache on to the attention and returns "
             "the present (KV cache) it gives back, as (hidden, present).",
             (RETURN, "return hidden, None"), observed=True)

fault.change("block", "residual_concatenated", "残差被写成了拼接（cat）：残差是逐元素相加，输出仍是 [B,T,d]。",
             "the residual was written as a concatenation: a residual adds elementwise and keeps [B,T,d].",
             (ADD_ATTENTION, "hidden = torch.cat([hidden, attended], dim=-1)"))

fault.change("block", "shared_layer_norm",
             "两条分支共用了同一套 LayerNorm（ln_attention）；每个块有两套独立的归一化，前馈分支用 ln_feedforward。",
             "both branches share one LayerNorm (ln_attention); a block has two independent norms, the FFN branch uses ln_feedforward.",
             ("self.feedforward(self.ln_feedforward(hidden))", "self.feedforward(self.ln_attention(hidden))"))

fault.change("block", "attention_residual_missing", "注意力分支缺少残差：U 应为 X + Attn(LN1(X))，而不是 Attn(LN1(X))。",
             "the attention branch lost its residual: U = X + Attn(LN1(X)), not Attn(LN1(X)).",
             (ADD_ATTENTION, "hidden = attended"))

fault.change("block", "attention_added_twice", "注意力增量被加了两次。", "the attention increment was added twice.",
             (ADD_FEEDFORWARD, "hidden = hidden + attended + self.feedforward(self.ln_feedforward(hidden))"))

fault.change("block", "present_from_input", "返回的是传入的 past_key_value，而不是注意力新给出的 present。",
             "returns the incoming past_key_value instead of the present that attention produced.",
             (RETURN, "return hidden, past_key_value"))

fault.change("block", "dropout_on_residual",
             "在残差主路上加了 dropout：训练模式下它会随机丢掉输入本身；dropout 只属于分支内部。",
             "dropout on the residual stream: in training mode it drops the input itself; dropout belongs inside the branches.",
             (ADD_ATTENTION, "hidden = F.dropout(hidden + attended, p=0.1, training=self.training)"))

fault.change("block", "attention_called_twice",
             "self.attention 被调用了两次（一次取增量，一次取 present）：一次调用就同时返回 (增量, present)，调用一次再拆开。"
             "训练模式下第二次调用会重新抽取 dropout，增量和 present 就不再来自同一次计算。",
             "self.attention was called twice (once for the increment, once for present): one call returns both "
             "(increment, present), so call it once and unpack. In training mode the second call draws its dropout "
             "again, and the increment and present no longer come from the same computation.",
             (ATTEND, "attended = self.attention(self.ln_attention(hidden), past_key_value, use_cache)[0]\n"
                      "present = self.attention(self.ln_attention(hidden), past_key_value, use_cache)[1]"))


# --- parameter_count -----------------------------------------------------------------


fault.change("feedforward", "hidden_detached",
             "中间层的激活被 .detach() 从计算图上切了下来：前向的数值没错，但梯度到不了 fc1 和输入，fc1 永远学不到东西。",
             "the hidden activation is cut from the graph with .detach(): the forward values are right, but no "
             "gradient reaches fc1 or the input, so fc1 never learns.",
             ("self.fc2(self.activation(self.fc1(x)))", "self.fc2(self.activation(self.fc1(x)).detach())"))

fault.change("block", "attention_branch_detached",
             "注意力分支的输出被 .detach() 切断了：前向的数值没错，但 ln_attention 和注意力得不到梯度，"
             "输入的梯度也只剩残差那条路。",
             "the attention branch's output is cut from the graph with .detach(): the forward values are right, but "
             "ln_attention and the attention get no gradient, and the input's gradient keeps only the residual path.",
             ("hidden = hidden + attended", "hidden = hidden + attended.detach()"))

# said as observed: math.pow, a `/` or a float() anywhere gives the same float
fault.change("parameter_count", "float_count",
             "你的计数是 float：参数个数是整数，应返回 int（比如 12，而不是 12.0；math.pow 和 / 都给出 float）。",
             "your count is a float: a parameter count is an integer, so return an int (12, say, not 12.0; math.pow "
             "and / both give floats).",
             ("per_block = 4 * d * d", "per_block = 4 * math.pow(d, 2)"), observed=True)

fault.change("parameter_count", "ledger_without_ffn_bias", "账本漏掉了 FFN 的两个偏置（f + d）。",
             "the ledger forgets the FFN biases (f + d).",
             ("+ f + d + 4 * d", "+ 4 * d"))

# said as observed: any count 2d short per block gives these totals (a bias counted negative as well)
fault.change("parameter_count", "ledger_norms_2d",
             "你的计数每个块少了 2d（共少 2·N·d）；对照每块的各项再数一遍，例如两套 LayerNorm 合计 4d（gamma、beta 各 d）。",
             "your count is 2d short per block (2*N*d in all); recount each block's terms: the two LayerNorms, "
             "for one, hold 4d (gamma and beta of width d, twice).",
             ("+ f + d + 4 * d", "+ f + d + 2 * d"), observed=True)

fault.change("parameter_count", "ledger_without_positions", "账本漏掉了位置表（C·d）；学习式绝对位置嵌入有 block_size 行。",
             "the ledger forgets the position table (C*d); learned absolute positions have block_size rows.",
             (" + C * d", ""))

fault.change("parameter_count", "ledger_tied_head", "把 head 当成与嵌入绑定（只计一次 Vd）；本模型的 head 不绑定，两者各 Vd。",
             "the head is counted as tied to the embedding (Vd once); this model's head is untied, Vd each.",
             ("return 2 * V * d", "return V * d"))

fault.change("parameter_count", "ledger_without_final_norm",
             "账本漏掉了最后的 LayerNorm（2d）；最后一个块之后、head 之前还有一套 gamma、beta。",
             "the ledger forgets the final LayerNorm (2d): one more gamma and beta sit after the last block, before the head.",
             ("N * per_block + 2 * d", "N * per_block"))

# the present handed back as is (原样) is the attention's own (keys, values), not copies
fault.change("block", "present_copied",
             "交回去的 present 不是注意力给出的那两个张量（被 .detach() 或复制了）：原样交回它给出的 present。",
             "the present handed back is not the attention's own two tensors (they were .detach()ed or copied): hand "
             "back the present it gave, as it is.",
             (RETURN, "return hidden, None if present is None else tuple(t.detach() for t in present)"))

"""Known misconceptions of chapter 4, each written as a change of the reference body.

One catalogue serves two purposes: diagnosis (a student's outputs that match a fault's on the
hidden cases get its misconception as feedback) and samples (`hero samples OUT` writes one
faulty submission per fault; the tests prove each loses points exactly on its exercise).

Most faults are the reference body with a line or two changed (`fault.change`, each old text
found once in the fenced body of hero_transformer/model.py); the few written whole compute
something else altogether, with only names that model.py itself has (torch, math, F).
"""

from autograder.registry import catalogue

CATALOGUE, fault = catalogue("fault")

MASK_SLICE = "self.causal_mask[total - length : total, :total]"
MASKED_SCORES = 'scores = attention_scores(q, k).masked_fill(~allowed, float("-inf"))'
DROPPED_WEIGHTS = "weights = self.attn_dropout(stable_softmax(scores))"
OUTPUT = "return self.proj(self.merge_heads(weights @ v)), present"
PRESENT = "present = (k, v) if use_cache else None"


# --- attention_scores ------------------------------------------------------------


fault.change("attention_scores", "no_scaling",
             "没有除以 √d_h：点积的方差随 d_h 增长，未缩放的分数会让 softmax 饱和成近似 one-hot。",
             "no division by sqrt(d_h): the dot product's variance grows with d_h, and unscaled scores saturate the "
             "softmax into a near one-hot.",
             (" / math.sqrt(q.shape[-1])", ""))

fault.change("attention_scores", "divided_by_head_dim",
             "除以的是 d_h 而不是 √d_h：点积的标准差按 √d_h 增长，缩放因子是 1/√d_h。",
             "divided by d_h instead of sqrt(d_h): the dot product's standard deviation grows like sqrt(d_h), so the "
             "factor is 1/sqrt(d_h).",
             ("math.sqrt(q.shape[-1])", "q.shape[-1]"))

# heads times head width, taken from the [B, h, T, d_h] layout
fault.change("attention_scores", "scaled_by_model_width",
             "用整个模型宽度 d = h·d_h 做缩放；分数在每个头内计算，缩放用每头宽度 d_h。",
             "scaled with the model width d = h*d_h; scores are computed within one head, so the scale uses the head "
             "width d_h.",
             ("math.sqrt(q.shape[-1])", "math.sqrt(q.shape[-1] * q.shape[1])"))

fault.change("attention_scores", "keys_as_rows",
             "算成了 K·Qᵀ：每一行应对应一个查询、每一列对应一个键，形状 [..., T_q, T_k]。",
             "computed K Q^T: each row belongs to a query and each column to a key, shape [..., T_q, T_k].",
             ("q @ k.transpose(-2, -1)", "k @ q.transpose(-2, -1)"))


# --- stable_softmax ----------------------------------------------------------------


fault.change("stable_softmax", "float32_out",
             "结果被转成了 float32：float64 的分数应得到 float64 的概率；softmax 不改变 dtype。",
             "the result is cast to float32: float64 scores give float64 probabilities; softmax keeps the dtype.",
             ("return exps / exps.sum(dim=-1, keepdim=True)", "return (exps / exps.sum(dim=-1, keepdim=True)).float()"))

fault.change("stable_softmax", "no_max_subtraction",
             "没有先减去每行的最大值：float32 的 exp(100) 溢出为 inf，inf/inf 得到 NaN。",
             "the row maximum is not subtracted first: float32 exp(100) overflows to inf and inf/inf gives NaN.",
             (" - scores.amax(dim=-1, keepdim=True)", ""))

fault.change("stable_softmax", "wrong_axis",
             "沿错了轴（dim=-2）做归一化：注意力权重是每个查询（每一行）对所有键的分布，沿最后一根轴。",
             "normalised along the wrong axis (dim=-2): attention weights are each query's (each row's) distribution "
             "over the keys, along the last axis.",
             ("scores.amax(dim=-1", "scores.amax(dim=-2"), ("exps.sum(dim=-1", "exps.sum(dim=-2"))

# an in-place write into the argument: the values returned are right, the caller's scores are not
fault.change("stable_softmax", "shifted_in_place",
             "对参数 scores 本身做了原地操作（sub_ 或 -=）：返回值没错，但调用者手里的分数被改写了，之后再用它（比如再算一次"
             "softmax、画热力图）都会悄悄出错。",
             "an in-place operation on the argument scores itself (sub_ or -=): the returned values are right, but the "
             "caller's scores are overwritten, and anything that uses them again (another softmax, a heat map) is "
             "silently wrong.",
             ("shifted = scores - scores.amax(dim=-1, keepdim=True)",
              "shifted = scores.sub_(scores.amax(dim=-1, keepdim=True))"))

fault.change("stable_softmax", "divided_by_max",
             "除以的是最大值而不是总和：权重要和为 1，分母是这一行所有 exp 之和。",
             "divided by the maximum instead of the sum: the weights must sum to 1, so the denominator is the sum of "
             "the row's exps.",
             ("exps.sum(dim=-1", "exps.amax(dim=-1"))

fault.change("stable_softmax", "global_max",
             "减去的是整个张量的最大值，而不是每一行自己的最大值：相距很远的两行中，小的那一行会下溢成 0/0。",
             "subtracted the whole tensor's maximum instead of each row's own: when rows lie far apart, the lower row "
             "underflows to 0/0.",
             ("scores.amax(dim=-1, keepdim=True)", "scores.max()"))

fault.change("stable_softmax", "max_in_numerator_only",
             "只在分子里减了最大值、分母仍用原始分数：分子分母要同乘 e^(-max)，结果才不变。",
             "subtracted the maximum in the numerator only, the denominator still uses the raw scores: both must be "
             "multiplied by e^-max for the result to stay the same.",
             ("exps / exps.sum(dim=-1, keepdim=True)", "exps / torch.exp(scores).sum(dim=-1, keepdim=True)"))


# --- split_heads -------------------------------------------------------------------

SPLIT = "t.view(batch, length, self.n_heads, self.head_dim).transpose(1, 2)"

fault.change("split_heads", "view_without_transpose",
             "直接 view 成 [B, h, T, d_h] 而没有转置：形状碰巧对，但同一行里混进了不同位置的特征。",
             "viewed straight to [B, h, T, d_h] without a transpose: the shape happens to fit, but one row mixes the "
             "features of different positions.",
             (SPLIT, "t.view(batch, self.n_heads, length, self.head_dim)"))

fault.change("split_heads", "interleaved_heads",
             "头是交错取的（第 j 个头拿特征 j, j+h, ...）；第 j 个头应持有连续的一段 j·d_h .. (j+1)·d_h - 1。",
             "the heads are interleaved (head j takes features j, j+h, ...); head j holds the contiguous slice "
             "j*d_h .. (j+1)*d_h - 1.",
             (SPLIT, "t.view(batch, length, self.head_dim, self.n_heads).permute(0, 3, 1, 2)"))

fault.change("split_heads", "heads_after_time",
             "头轴留在了时间轴之后（[B, T, h, d_h]）：注意力按头并行，要 transpose(1, 2) 成 [B, h, T, d_h]。",
             "the head axis stays after time ([B, T, h, d_h]): attention runs per head, so transpose(1, 2) to "
             "[B, h, T, d_h].",
             (".transpose(1, 2)", ""))

fault.change("split_heads", "head_transposed",
             "每个头内部被转置成了 [d_h, T]：应为 [B, h, T, d_h]，时间在倒数第二根轴。",
             "each head was transposed to [d_h, T]: it is [B, h, T, d_h], time on the second axis from the end.",
             (".transpose(1, 2)", ".permute(0, 2, 3, 1)"))


# --- merge_heads -------------------------------------------------------------------


fault.change("merge_heads", "merge_without_transpose",
             "没有先把头轴换回时间轴之后就 reshape：形状碰巧是 [B, T, d]，数值却混了位置。",
             "reshaped without moving the head axis back after time: the shape happens to be [B, T, d], but positions "
             "are mixed.",
             ("t.transpose(1, 2).reshape", "t.reshape"))

fault.change("merge_heads", "heads_not_concatenated",
             "只做了转置、没有把各头拼接回宽度 d：输出应为 [B, T, d]，不是 [B, T, h, d_h]。",
             "transposed only, without concatenating the heads back to width d: the output is [B, T, d], not "
             "[B, T, h, d_h].",
             (".reshape(batch, length, heads * head_dim)", ""))

fault.change("merge_heads", "interleaved_merge",
             "合并时把各头交错排列（特征 j, j+h, ... 来自第 j 个头）；各头应按顺序首尾拼接。",
             "the merge interleaves the heads (features j, j+h, ... from head j); the heads are concatenated one after "
             "another.",
             ("t.transpose(1, 2)", "t.permute(0, 2, 3, 1)"))


# --- attention (CausalSelfAttention.forward) -----------------------------------------
# A body calls the module-level attention_scores and stable_softmax by name, as the reference
# does: a sample's finds its model.py's own, replaced by the probes' doubles while a case runs.


fault.change("attention", "mask_not_applied", "没有施加因果掩码：每个位置都看到了未来的词元。",
             "the causal mask is not applied: every position sees future tokens.",
             (MASKED_SCORES, "scores = attention_scores(q, k)"))

fault.change("attention", "mask_filled_with_zero",
             "掩码用 0 而不是 -inf 填充：e^0 = 1，被“遮住”的未来位置仍然得到权重。",
             "the mask fills with 0 instead of -inf: e^0 = 1, so the 'masked' future positions still get weight.",
             ('float("-inf")', "0.0"))

fault.change("attention", "mask_filled_with_large_negative",
             "掩码填的是一个很大的有限负数（-1e9、finfo.min 之类）而不是 -inf：这里的权重碰巧一样，但一整行都不许看时，"
             "有限的负数给出均匀的权重（读到了不许读的位置），-inf 给出 NaN、把错误暴露出来。课文的规则是填 -inf。",
             "the mask is filled with a large finite negative number (-1e9, finfo.min...) instead of -inf: the "
             "weights happen to agree here, but in a row where nothing is allowed a finite number gives uniform "
             "weights (reading what it may not) where -inf gives NaN and shows the mistake. The text's rule is -inf.",
             ('masked_fill(~allowed, float("-inf"))', "masked_fill(~allowed, -1e9)"))

fault.change("attention", "mask_one_step_ahead",
             "掩码多放行了一步未来（相当于 tril(1)）：位置 i 只能看 j ≤ i，对角线之上全是 -inf。",
             "the mask lets one future step through (as tril(1) would): position i sees only j <= i, everything above "
             "the diagonal is -inf.",
             (MASK_SLICE, "torch.ones(length, total, dtype=torch.bool, device=x.device).tril(total - length + 1)"))

fault.change("attention", "mask_from_top_left",
             "有缓存时掩码仍从左上角切（causal_mask[:T, :total]）：新查询位于绝对位置 total-T 起，应取第 total-T 到 total-1 行。",
             "with a cache the mask is still cut from the top-left corner (causal_mask[:T, :total]): the new queries sit "
             "at absolute positions from total-T on, so take rows total-T .. total-1.",
             (MASK_SLICE, "self.causal_mask[:length, :total]"))

fault.change("attention", "mask_rebuilt_each_call",
             "每次调用都新建一个下三角掩码，没有用注册好的缓冲区 self.causal_mask（按 [total-T:total, :total] 切片）。",
             "a new triangular mask is built on every call instead of slicing the registered buffer self.causal_mask "
             "([total-T:total, :total]).",
             (MASK_SLICE, "torch.ones(length, total, dtype=torch.bool, device=x.device).tril(total - length)"))

fault.change("attention", "own_tril_from_top_left",
             "掩码是自己用 torch.tril 建的 [T, total] 下三角，没有读注册好的缓冲区 self.causal_mask。练习要求从缓冲区切片："
             "self.causal_mask[total-T:total, :total]（自建的 tril 还从第 0 行开始，有缓存时新查询的行也就错了）。",
             "the mask is a [T, total] lower triangle built with torch.tril instead of read from the registered buffer "
             "self.causal_mask. The exercise slices the buffer: self.causal_mask[total-T:total, :total] (a tril built "
             "this way also starts at row 0, so with a cache the new queries' rows are wrong too).",
             (MASK_SLICE, "torch.tril(torch.ones(length, total, dtype=torch.bool, device=x.device))"))

fault.change("attention", "cache_order_reversed",
             "过去的键值接在了新键值的后面：时间轴上过去在前、新算的在后，顺序反了，掩码和 present 就都对不上。",
             "the past keys and values were put after the new ones: on the time axis the past comes first and the new "
             "ones follow; in the reversed order neither the mask nor present lines up.",
             ("torch.cat([past_k, k], dim=2)", "torch.cat([k, past_k], dim=2)"),
             ("torch.cat([past_v, v], dim=2)", "torch.cat([v, past_v], dim=2)"))

# the last `length` positions of the concatenation are the new keys and values
fault.change("attention", "present_without_past",
             "present 只含这次新算的键值，丢了过去的：下一步解码就看不到更早的词元。present 应为拼接之后的 (k, v)。",
             "present holds only the new keys and values and drops the past: the next decoding step cannot see earlier "
             "tokens. present is (k, v) after the concatenation.",
             (PRESENT, "present = (k[:, :, total - length:], v[:, :, total - length:]) if use_cache else None"))

fault.change("attention", "present_always",
             "use_cache=False 时也返回了 present；约定是只有 use_cache=True 才返回 (k, v)，否则为 None。",
             "present is returned with use_cache=False too; the contract returns (k, v) only when use_cache is True, "
             "None otherwise.",
             (PRESENT, "present = (k, v)"))

fault.change("attention", "qkv_order_swapped",
             "融合 QKV 的输出按错误的顺序拆分：存储 [3d, d] 的三段依次是 q、k、v。",
             "the fused QKV output is split in the wrong order: the three slices of the [3d, d] storage are q, k, v in "
             "that order.",
             ("q, k, v = (", "k, q, v = ("))

fault.change("attention", "dropout_on_scores",
             "dropout 放在了 softmax 之前（作用于分数）；它只作用于 softmax 之后的注意力权重。",
             "dropout was applied before the softmax (on the scores); it acts on the attention weights after the "
             "softmax only.",
             (MASKED_SCORES, 'scores = self.attn_dropout(attention_scores(q, k).masked_fill(~allowed, float("-inf")))'),
             (DROPPED_WEIGHTS, "weights = stable_softmax(scores)"))

fault.change("attention", "dropout_on_output",
             "dropout 作用在了注意力的输出上；本课程的注意力 dropout 只作用于注意力权重（另一处 dropout 在 FFN 里）。",
             "dropout was applied to the attention output; the course's attention dropout acts on the attention weights "
             "only (the other dropout sits in the FFN).",
             (DROPPED_WEIGHTS, "weights = stable_softmax(scores)"),
             (OUTPUT, "return self.attn_dropout(self.proj(self.merge_heads(weights @ v))), present"))

fault.change("attention", "dropout_missing",
             "漏掉了 self.attn_dropout：训练模式下 softmax 之后的注意力权重要经过这一处 dropout，再乘 v。",
             "self.attn_dropout is missing: in training mode the attention weights pass through this one dropout after "
             "the softmax, before they multiply v.",
             (DROPPED_WEIGHTS, "weights = stable_softmax(scores)"))

fault.change("attention", "no_output_projection",
             "漏掉了输出投影 proj：各头合并之后还要乘 W_O（self.proj，无偏置）。",
             "the output projection is missing: after merging the heads, multiply by W_O (self.proj, no bias).",
             (OUTPUT, "return self.merge_heads(weights @ v), present"))


# --- gradients and range, from the independent set (issue 39) -----------------------------------


fault.change("attention_scores", "keys_detached",
             "梯度到不了键 k（也就到不了 W_K）（.detach()、.data 或 torch.no_grad() 会把它从计算图上剪下来）：分数的数值没错，但注意力学不到该看哪里。",
             "no gradient reaches the keys k (nor W_K) (.detach(), .data or torch.no_grad() cuts it from the graph):"
             " the scores' values are right, but attention cannot learn where to look.",
             ("k.transpose(-2, -1)", "k.detach().transpose(-2, -1)"), observed=True)

fault.change("stable_softmax", "exps_detached",
             "梯度到不了分数（.detach()、.data 或 torch.no_grad() 会把它从计算图上剪下来）：概率的数值没错，但 softmax 是训练出来的模型的一部分。",
             "no gradient reaches the scores (.detach(), .data or torch.no_grad() cuts it from the graph): the"
             " probabilities are right, but the softmax is part of the trained model.",
             ("exps = torch.exp(shifted)", "exps = torch.exp(shifted).detach()"), observed=True)

fault.change("stable_softmax", "first_score_subtracted",
             "减去的是每行的第一个分数，不是最大值：只有减去最大值才保证 exp 不溢出（第一个远小于最大值时得到 inf/inf = NaN）。",
             "each row's first score was subtracted, not its maximum: only the maximum keeps exp from overflowing (when "
             "the first is far below the maximum, inf/inf gives NaN).",
             ("scores.amax(dim=-1, keepdim=True)", "scores[..., :1]"))

fault.change("split_heads", "split_detached",
             "梯度回不到输入（.detach()、.data 或 torch.no_grad() 会把它从计算图上剪下来）：形状和数值都对，但 q、k、v 的投影学不到东西。",
             "no gradient flows back to the input (.detach(), .data or torch.no_grad() cuts it from the graph):"
             " shape and values are right, but the q, k, v projections learn nothing.",
             ("return t.view(", "return t.detach().view("), observed=True)

fault.change("merge_heads", "merge_detached",
             "梯度回不到各头（.detach()、.data 或 torch.no_grad() 会把它从计算图上剪下来）：形状和数值都对，但前面的层学不到东西。",
             "no gradient flows back to the heads (.detach(), .data or torch.no_grad() cuts it from the graph):"
             " shape and values are right, but the layers before learn nothing.",
             ("return t.transpose(1, 2)", "return t.detach().transpose(1, 2)"), observed=True)

fault.change("attention", "projection_detached",
             "梯度到不了输入 x 和 W_QKV（.detach()、.data 或 torch.no_grad() 会把它从计算图上剪下来）：输出的数值没错，但注意力学不到东西。",
             "no gradient reaches the input x or W_QKV (.detach(), .data or torch.no_grad() cuts it from the graph):"
             " the output is right, but the attention learns nothing.",
             ("self.qkv(x).split(", "self.qkv(x).detach().split("), observed=True)

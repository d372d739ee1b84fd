"""Known misconceptions of chapter 4, each written as a faulty exercise body.

One catalogue serves two purposes: diagnosis (a student's outputs that match a fault's on the
hidden cases get its misconception as feedback) and samples (`hero samples OUT` writes one
faulty submission per fault; the tests prove each loses points exactly on its exercise).

Each function has the signature of the exercise it replaces and uses only names that model.py
itself imports (torch, math, F).  A body of `CausalSelfAttention.forward` calls the module-level
`attention_scores` and `stable_softmax` by name, as the reference does: inside a sample's model.py
it finds that module's own, and run here it finds the two proxies below.
"""

import math  # noqa: F401  (used by fault bodies)

import torch  # noqa: F401
import torch.nn.functional as F  # noqa: F401

from autograder.registry import catalogue

CATALOGUE, fault = catalogue("fault")


# --- attention_scores ------------------------------------------------------------


@fault("attention_scores", "没有除以 √d_h：点积的方差随 d_h 增长，未缩放的分数会让 softmax 饱和成近似 one-hot。",
       "no division by sqrt(d_h): the dot product's variance grows with d_h, and unscaled scores saturate the "
       "softmax into a near one-hot.")
def no_scaling(q, k):
    return q @ k.transpose(-2, -1)


@fault("attention_scores", "除以的是 d_h 而不是 √d_h：点积的标准差按 √d_h 增长，缩放因子是 1/√d_h。",
       "divided by d_h instead of sqrt(d_h): the dot product's standard deviation grows like sqrt(d_h), so the "
       "factor is 1/sqrt(d_h).")
def divided_by_head_dim(q, k):
    return q @ k.transpose(-2, -1) / q.shape[-1]


@fault("attention_scores", "用整个模型宽度 d = h·d_h 做缩放；分数在每个头内计算，缩放用每头宽度 d_h。",
       "scaled with the model width d = h*d_h; scores are computed within one head, so the scale uses the head "
       "width d_h.")
def scaled_by_model_width(q, k):
    width = q.shape[-1] * q.shape[1]  # heads times head width, taken from the [B, h, T, d_h] layout
    return q @ k.transpose(-2, -1) / math.sqrt(width)


@fault("attention_scores", "算成了 K·Qᵀ：每一行应对应一个查询、每一列对应一个键，形状 [..., T_q, T_k]。",
       "computed K Q^T: each row belongs to a query and each column to a key, shape [..., T_q, T_k].")
def keys_as_rows(q, k):
    return k @ q.transpose(-2, -1) / math.sqrt(q.shape[-1])


# --- stable_softmax ----------------------------------------------------------------


@fault("stable_softmax", "没有先减去每行的最大值：float32 的 exp(100) 溢出为 inf，inf/inf 得到 NaN。",
       "the row maximum is not subtracted first: float32 exp(100) overflows to inf and inf/inf gives NaN.")
def no_max_subtraction(scores):
    exps = torch.exp(scores)
    return exps / exps.sum(dim=-1, keepdim=True)


@fault("stable_softmax", "沿错了轴（dim=-2）做归一化：注意力权重是每个查询（每一行）对所有键的分布，沿最后一根轴。",
       "normalised along the wrong axis (dim=-2): attention weights are each query's (each row's) distribution "
       "over the keys, along the last axis.")
def wrong_axis(scores):
    shifted = scores - scores.amax(dim=-2, keepdim=True)
    exps = torch.exp(shifted)
    return exps / exps.sum(dim=-2, keepdim=True)


@fault("stable_softmax", "除以的是最大值而不是总和：权重要和为 1，分母是这一行所有 exp 之和。",
       "divided by the maximum instead of the sum: the weights must sum to 1, so the denominator is the sum of "
       "the row's exps.")
def divided_by_max(scores):
    exps = torch.exp(scores - scores.amax(dim=-1, keepdim=True))
    return exps / exps.amax(dim=-1, keepdim=True)


@fault("stable_softmax", "减去的是整个张量的最大值，而不是每一行自己的最大值：相距很远的两行中，小的那一行会下溢成 0/0。",
       "subtracted the whole tensor's maximum instead of each row's own: when rows lie far apart, the lower row "
       "underflows to 0/0.")
def global_max(scores):
    exps = torch.exp(scores - scores.max())
    return exps / exps.sum(dim=-1, keepdim=True)


@fault("stable_softmax", "只在分子里减了最大值、分母仍用原始分数：分子分母要同乘 e^(-max)，结果才不变。",
       "subtracted the maximum in the numerator only, the denominator still uses the raw scores: both must be "
       "multiplied by e^-max for the result to stay the same.")
def max_in_numerator_only(scores):
    return torch.exp(scores - scores.amax(dim=-1, keepdim=True)) / torch.exp(scores).sum(dim=-1, keepdim=True)


# --- split_heads -------------------------------------------------------------------


@fault("split_heads", "直接 view 成 [B, h, T, d_h] 而没有转置：形状碰巧对，但同一行里混进了不同位置的特征。",
       "viewed straight to [B, h, T, d_h] without a transpose: the shape happens to fit, but one row mixes the "
       "features of different positions.")
def view_without_transpose(self, t):
    batch, length, _ = t.shape
    return t.reshape(batch, self.n_heads, length, self.head_dim)


@fault("split_heads", "头是交错取的（第 j 个头拿特征 j, j+h, ...）；第 j 个头应持有连续的一段 j·d_h .. (j+1)·d_h - 1。",
       "the heads are interleaved (head j takes features j, j+h, ...); head j holds the contiguous slice "
       "j*d_h .. (j+1)*d_h - 1.")
def interleaved_heads(self, t):
    batch, length, _ = t.shape
    return t.reshape(batch, length, self.head_dim, self.n_heads).permute(0, 3, 1, 2)


@fault("split_heads", "头轴留在了时间轴之后（[B, T, h, d_h]）：注意力按头并行，要 transpose(1, 2) 成 [B, h, T, d_h]。",
       "the head axis stays after time ([B, T, h, d_h]): attention runs per head, so transpose(1, 2) to "
       "[B, h, T, d_h].")
def heads_after_time(self, t):
    batch, length, _ = t.shape
    return t.reshape(batch, length, self.n_heads, self.head_dim)


@fault("split_heads", "每个头内部被转置成了 [d_h, T]：应为 [B, h, T, d_h]，时间在倒数第二根轴。",
       "each head was transposed to [d_h, T]: it is [B, h, T, d_h], time on the second axis from the end.")
def head_transposed(self, t):
    batch, length, _ = t.shape
    return t.reshape(batch, length, self.n_heads, self.head_dim).permute(0, 2, 3, 1)


# --- merge_heads -------------------------------------------------------------------


@fault("merge_heads", "没有先把头轴换回时间轴之后就 reshape：形状碰巧是 [B, T, d]，数值却混了位置。",
       "reshaped without moving the head axis back after time: the shape happens to be [B, T, d], but positions "
       "are mixed.")
def merge_without_transpose(self, t):
    batch, heads, length, head_dim = t.shape
    return t.reshape(batch, length, heads * head_dim)


@fault("merge_heads", "只做了转置、没有把各头拼接回宽度 d：输出应为 [B, T, d]，不是 [B, T, h, d_h]。",
       "transposed only, without concatenating the heads back to width d: the output is [B, T, d], not "
       "[B, T, h, d_h].")
def heads_not_concatenated(self, t):
    return t.transpose(1, 2)


@fault("merge_heads", "合并时把各头交错排列（特征 j, j+h, ... 来自第 j 个头）；各头应按顺序首尾拼接。",
       "the merge interleaves the heads (features j, j+h, ... from head j); the heads are concatenated one after "
       "another.")
def interleaved_merge(self, t):
    batch, heads, length, head_dim = t.shape
    return t.permute(0, 2, 3, 1).reshape(batch, length, heads * head_dim)


# --- the module-level functions a forward body calls ------------------------------------
# In a sample submission a body runs inside model.py and finds that module's own functions; run
# here by the grader, it finds these, which call whatever the reference module holds at the time
# (the probes' test doubles while a case runs).


def attention_scores(q, k):
    return _reference().attention_scores(q, k)


def stable_softmax(scores):
    return _reference().stable_softmax(scores)


def _reference():
    from autograder.reference import model

    return model


# --- attention (CausalSelfAttention.forward) -----------------------------------------


@fault("attention", "没有施加因果掩码：每个位置都看到了未来的词元。",
       "the causal mask is not applied: every position sees future tokens.")
def mask_not_applied(self, x, past_key_value=None, use_cache=False):
    q, k, v = (self.split_heads(t) for t in self.qkv(x).split(x.shape[-1], dim=-1))
    if past_key_value is not None:
        k = torch.cat([past_key_value[0], k], dim=2)
        v = torch.cat([past_key_value[1], v], dim=2)
    weights = self.attn_dropout(stable_softmax(attention_scores(q, k)))
    return self.proj(self.merge_heads(weights @ v)), ((k, v) if use_cache else None)


@fault("attention", "掩码用 0 而不是 -inf 填充：e^0 = 1，被“遮住”的未来位置仍然得到权重。",
       "the mask fills with 0 instead of -inf: e^0 = 1, so the 'masked' future positions still get weight.")
def mask_filled_with_zero(self, x, past_key_value=None, use_cache=False):
    q, k, v = (self.split_heads(t) for t in self.qkv(x).split(x.shape[-1], dim=-1))
    if past_key_value is not None:
        k = torch.cat([past_key_value[0], k], dim=2)
        v = torch.cat([past_key_value[1], v], dim=2)
    total = k.shape[2]
    allowed = self.causal_mask[total - x.shape[1]:total, :total]
    weights = self.attn_dropout(stable_softmax(attention_scores(q, k).masked_fill(~allowed, 0.0)))
    return self.proj(self.merge_heads(weights @ v)), ((k, v) if use_cache else None)


@fault("attention", "掩码多放行了一步未来（相当于 tril(1)）：位置 i 只能看 j ≤ i，对角线之上全是 -inf。",
       "the mask lets one future step through (as tril(1) would): position i sees only j <= i, everything above "
       "the diagonal is -inf.")
def mask_one_step_ahead(self, x, past_key_value=None, use_cache=False):
    q, k, v = (self.split_heads(t) for t in self.qkv(x).split(x.shape[-1], dim=-1))
    if past_key_value is not None:
        k = torch.cat([past_key_value[0], k], dim=2)
        v = torch.cat([past_key_value[1], v], dim=2)
    total, length = k.shape[2], x.shape[1]
    allowed = torch.ones(length, total, dtype=torch.bool, device=x.device).tril(total - length + 1)
    weights = self.attn_dropout(stable_softmax(attention_scores(q, k).masked_fill(~allowed, float("-inf"))))
    return self.proj(self.merge_heads(weights @ v)), ((k, v) if use_cache else None)


@fault("attention", "有缓存时掩码仍从左上角切（causal_mask[:T, :total]）：新查询位于绝对位置 total-T 起，应取第 total-T 到 total-1 行。",
       "with a cache the mask is still cut from the top-left corner (causal_mask[:T, :total]): the new queries sit "
       "at absolute positions from total-T on, so take rows total-T .. total-1.")
def mask_from_top_left(self, x, past_key_value=None, use_cache=False):
    q, k, v = (self.split_heads(t) for t in self.qkv(x).split(x.shape[-1], dim=-1))
    if past_key_value is not None:
        k = torch.cat([past_key_value[0], k], dim=2)
        v = torch.cat([past_key_value[1], v], dim=2)
    total, length = k.shape[2], x.shape[1]
    allowed = self.causal_mask[:length, :total]
    weights = self.attn_dropout(stable_softmax(attention_scores(q, k).masked_fill(~allowed, float("-inf"))))
    return self.proj(self.merge_heads(weights @ v)), ((k, v) if use_cache else None)


@fault("attention", "每次调用都新建一个下三角掩码，没有用注册好的缓冲区 self.causal_mask（按 [total-T:total, :total] 切片）。",
       "a new triangular mask is built on every call instead of slicing the registered buffer self.causal_mask "
       "([total-T:total, :total]).")
def mask_rebuilt_each_call(self, x, past_key_value=None, use_cache=False):
    q, k, v = (self.split_heads(t) for t in self.qkv(x).split(x.shape[-1], dim=-1))
    if past_key_value is not None:
        k = torch.cat([past_key_value[0], k], dim=2)
        v = torch.cat([past_key_value[1], v], dim=2)
    total, length = k.shape[2], x.shape[1]
    allowed = torch.ones(length, total, dtype=torch.bool, device=x.device).tril(total - length)
    weights = self.attn_dropout(stable_softmax(attention_scores(q, k).masked_fill(~allowed, float("-inf"))))
    return self.proj(self.merge_heads(weights @ v)), ((k, v) if use_cache else None)


@fault("attention", "过去的键值接在了新键值的后面：时间轴上过去在前、新算的在后，顺序反了，掩码和 present 就都对不上。",
       "the past keys and values were put after the new ones: on the time axis the past comes first and the new "
       "ones follow; in the reversed order neither the mask nor present lines up.")
def cache_order_reversed(self, x, past_key_value=None, use_cache=False):
    q, k, v = (self.split_heads(t) for t in self.qkv(x).split(x.shape[-1], dim=-1))
    if past_key_value is not None:
        k = torch.cat([k, past_key_value[0]], dim=2)
        v = torch.cat([v, past_key_value[1]], dim=2)
    total, length = k.shape[2], x.shape[1]
    allowed = self.causal_mask[total - length:total, :total]
    weights = self.attn_dropout(stable_softmax(attention_scores(q, k).masked_fill(~allowed, float("-inf"))))
    return self.proj(self.merge_heads(weights @ v)), ((k, v) if use_cache else None)


@fault("attention", "present 只含这次新算的键值，丢了过去的：下一步解码就看不到更早的词元。present 应为拼接之后的 (k, v)。",
       "present holds only the new keys and values and drops the past: the next decoding step cannot see earlier "
       "tokens. present is (k, v) after the concatenation.")
def present_without_past(self, x, past_key_value=None, use_cache=False):
    q, k_new, v_new = (self.split_heads(t) for t in self.qkv(x).split(x.shape[-1], dim=-1))
    k, v = k_new, v_new
    if past_key_value is not None:
        k = torch.cat([past_key_value[0], k], dim=2)
        v = torch.cat([past_key_value[1], v], dim=2)
    total, length = k.shape[2], x.shape[1]
    allowed = self.causal_mask[total - length:total, :total]
    weights = self.attn_dropout(stable_softmax(attention_scores(q, k).masked_fill(~allowed, float("-inf"))))
    return self.proj(self.merge_heads(weights @ v)), ((k_new, v_new) if use_cache else None)


@fault("attention", "use_cache=False 时也返回了 present；约定是只有 use_cache=True 才返回 (k, v)，否则为 None。",
       "present is returned with use_cache=False too; the contract returns (k, v) only when use_cache is True, "
       "None otherwise.")
def present_always(self, x, past_key_value=None, use_cache=False):
    q, k, v = (self.split_heads(t) for t in self.qkv(x).split(x.shape[-1], dim=-1))
    if past_key_value is not None:
        k = torch.cat([past_key_value[0], k], dim=2)
        v = torch.cat([past_key_value[1], v], dim=2)
    total, length = k.shape[2], x.shape[1]
    allowed = self.causal_mask[total - length:total, :total]
    weights = self.attn_dropout(stable_softmax(attention_scores(q, k).masked_fill(~allowed, float("-inf"))))
    return self.proj(self.merge_heads(weights @ v)), (k, v)


@fault("attention", "融合 QKV 的输出按错误的顺序拆分：存储 [3d, d] 的三段依次是 q、k、v。",
       "the fused QKV output is split in the wrong order: the three slices of the [3d, d] storage are q, k, v in "
       "that order.")
def qkv_order_swapped(self, x, past_key_value=None, use_cache=False):
    k, q, v = (self.split_heads(t) for t in self.qkv(x).split(x.shape[-1], dim=-1))
    if past_key_value is not None:
        k = torch.cat([past_key_value[0], k], dim=2)
        v = torch.cat([past_key_value[1], v], dim=2)
    total, length = k.shape[2], x.shape[1]
    allowed = self.causal_mask[total - length:total, :total]
    weights = self.attn_dropout(stable_softmax(attention_scores(q, k).masked_fill(~allowed, float("-inf"))))
    return self.proj(self.merge_heads(weights @ v)), ((k, v) if use_cache else None)


@fault("attention", "dropout 放在了 softmax 之前（作用于分数）；它只作用于 softmax 之后的注意力权重。",
       "dropout was applied before the softmax (on the scores); it acts on the attention weights after the "
       "softmax only.")
def dropout_on_scores(self, x, past_key_value=None, use_cache=False):
    q, k, v = (self.split_heads(t) for t in self.qkv(x).split(x.shape[-1], dim=-1))
    if past_key_value is not None:
        k = torch.cat([past_key_value[0], k], dim=2)
        v = torch.cat([past_key_value[1], v], dim=2)
    total, length = k.shape[2], x.shape[1]
    allowed = self.causal_mask[total - length:total, :total]
    scores = self.attn_dropout(attention_scores(q, k).masked_fill(~allowed, float("-inf")))
    weights = stable_softmax(scores)
    return self.proj(self.merge_heads(weights @ v)), ((k, v) if use_cache else None)


@fault("attention", "dropout 作用在了注意力的输出上；本课程的注意力 dropout 只作用于注意力权重（另一处 dropout 在 FFN 里）。",
       "dropout was applied to the attention output; the course's attention dropout acts on the attention weights "
       "only (the other dropout sits in the FFN).")
def dropout_on_output(self, x, past_key_value=None, use_cache=False):
    q, k, v = (self.split_heads(t) for t in self.qkv(x).split(x.shape[-1], dim=-1))
    if past_key_value is not None:
        k = torch.cat([past_key_value[0], k], dim=2)
        v = torch.cat([past_key_value[1], v], dim=2)
    total, length = k.shape[2], x.shape[1]
    allowed = self.causal_mask[total - length:total, :total]
    weights = stable_softmax(attention_scores(q, k).masked_fill(~allowed, float("-inf")))
    return self.attn_dropout(self.proj(self.merge_heads(weights @ v))), ((k, v) if use_cache else None)


@fault("attention", "漏掉了输出投影 proj：各头合并之后还要乘 W_O（self.proj，无偏置）。",
       "the output projection is missing: after merging the heads, multiply by W_O (self.proj, no bias).")
def no_output_projection(self, x, past_key_value=None, use_cache=False):
    q, k, v = (self.split_heads(t) for t in self.qkv(x).split(x.shape[-1], dim=-1))
    if past_key_value is not None:
        k = torch.cat([past_key_value[0], k], dim=2)
        v = torch.cat([past_key_value[1], v], dim=2)
    total, length = k.shape[2], x.shape[1]
    allowed = self.causal_mask[total - length:total, :total]
    weights = self.attn_dropout(stable_softmax(attention_scores(q, k).masked_fill(~allowed, float("-inf"))))
    return self.merge_heads(weights @ v), ((k, v) if use_cache else None)

"""Known misconceptions of chapter 8, each a change of the reference body.

Diagnosis (outputs equal to a fault's on every case name its misconception in the feedback) and
samples (`hero samples OUT` writes one faulty submission per fault).  Every entry is a
`fault.change`: the reference body of train.py with the edits applied, so no copy of it can go
stale.  `next_token_probs` inside a generate body is called by name: the probes put their
stand-in sampler wherever the body looks its globals up, in a student's module or in the copy of
train.py's namespace a change is compiled in.
"""

from torch import nn  # noqa: F401  (used by the written faults)

from autograder.registry import catalogue

CATALOGUE, fault = catalogue("fault")


# --- get_batch -------------------------------------------------------------------------------

fault.change("get_batch", "targets_not_shifted",
             "y 没有右移一位：目标应是每个位置的下一个词元 data[s+1 : s+T+1]，而不是输入本身。",
             "y is not shifted by one: the targets are each position's next token, data[s+1 : s+T+1], not the inputs.",
             ("data[s + 1 : s + 1 + block_size]", "data[s : s + block_size]"))

fault.change("get_batch", "start_bound_too_high",
             "起点的上界多了 1（len(data) - T + 1）：从最后那个起点取的窗口，目标会越过数据末尾。",
             "the starts' bound is one too large (len(data) - T + 1): a window from the last start has targets past "
             "the end of the data.",
             ("len(data) - block_size,", "len(data) - block_size + 1,"))

fault.change("get_batch", "generator_ignored",
             "没有用传入的 generator 抽起点：同一个随机种子不再给出同一批，训练也就无法复现。",
             "the starts are not drawn with the generator passed in: the same seed no longer gives the same batch, so "
             "a run cannot be repeated.",
             (", generator=generator)", ")"))

fault.change("get_batch", "batch_time_swapped",
             "批量轴和时间轴放反了：x、y 应是 [B, T]（每行一个窗口），不是 [T, B]。",
             "the batch and time axes are swapped: x and y are [B, T] (one window per row), not [T, B].",
             ("x = torch.stack([data[s : s + block_size] for s in starts])",
              "x = torch.stack([data[s : s + block_size] for s in starts], dim=1)"),
             ("y = torch.stack([data[s + 1 : s + 1 + block_size] for s in starts])",
              "y = torch.stack([data[s + 1 : s + 1 + block_size] for s in starts], dim=1)"))

fault.change("get_batch", "one_draw_per_row",
             "每一行单独调用一次 torch.randint 抽起点：约定是一次调用抽出全部 batch_size 个起点（CPU 上数值碰巧相同，"
             "但规则是一次）。",
             "each row draws its start with its own torch.randint call: the convention draws all batch_size starts in "
             "one call (on the CPU the values happen to agree, but the rule is one call).",
             ("starts = torch.randint(len(data) - block_size, (batch_size,), generator=generator).tolist()",
              "starts = [int(torch.randint(len(data) - block_size, (1,), generator=generator)) for _ in range(batch_size)]"))


fault.change("get_batch", "one_row_as_views",
             "batch_size 为 1 时直接返回了 data 的切片（视图）：x、y 与数据共用内存，改动这一批（比如把某些词元换掉）"
             "就改动了训练数据本身。每一批都应是新的张量（torch.stack 会复制）。",
             "with batch_size 1 the batch is a slice (a view) of data: x and y share the data's memory, so changing "
             "the batch (replacing some tokens, say) changes the training data itself. Every batch is a new tensor "
             "(torch.stack copies).",
             ("x = torch.stack([data[s : s + block_size] for s in starts])",
              "if batch_size == 1:  # one window: nothing to stack\n"
              "    s = starts[0]\n"
              "    return data[s : s + block_size].unsqueeze(0), data[s + 1 : s + 1 + block_size].unsqueeze(0)\n"
              "x = torch.stack([data[s : s + block_size] for s in starts])"))


# --- parameter_groups ------------------------------------------------------------------------

fault.change("parameter_groups", "ndim_rule",
             "用了 p.ndim < 2 的规则：它会让嵌入表也衰减。嵌入表的行是查出来的，只在那个字出现时才有梯度，而衰减每一步都缩小每一行。",
             "the p.ndim < 2 rule: it decays the embedding tables too. An embedding's rows are looked up and get a "
             "gradient only when their token appears, while decay shrinks every row every step.",
             ("group = decay if id(parameter) in linear_weights else no_decay",
              "group = no_decay if parameter.ndim < 2 else decay"))

fault.change("parameter_groups", "frozen_included",
             "把冻结的参数（requires_grad=False）也交给了优化器；只收可训练的参数。",
             "frozen parameters (requires_grad=False) were handed to the optimiser too; take trainable ones only.",
             ("    if not parameter.requires_grad:\n        continue\n", ""))

fault.change("parameter_groups", "groups_swapped",
             "两组的顺序或衰减值放反了：第一组衰减（weight_decay），第二组不衰减（0.0）。",
             "the groups' order or decay values are swapped: the first group decays (weight_decay), the second does "
             "not (0.0).",
             ("return [decay, no_decay]", "return [no_decay, decay]"))

fault.change("parameter_groups", "weight_in_name",
             "按名字里有没有 \"weight\" 来分：LayerNorm 的 gamma 也叫 weight，嵌入表也叫 weight，它们都不该衰减。",
             "split by whether the name contains \"weight\": LayerNorm's gamma is called weight too, and so are the "
             "embedding tables; none of them should decay.",
             ("id(parameter) in linear_weights", "name.endswith(\"weight\")"))


# --- lr_at -----------------------------------------------------------------------------------

# the argument checks, as they read in train.py
STEP_CHECK = ('if step < 0:\n'
              '    raise ValueError(f"step={step}：步数从 0 数起，不能为负 (step counts from 0 and cannot be negative)")\n')
WARMUP_CHECK = ('if warmup_steps > total_steps:\n'
                '    raise ValueError(f"warmup_steps={warmup_steps} 大于 total_steps={total_steps} "\n'
                '                     f"(warmup cannot be longer than the whole run)")\n')

fault.change("lr_at", "warmup_from_zero",
             "warmup 从 0 开始（max_lr·step/warmup_steps）：第 0 步的学习率是 0，这一步白做；应为 max_lr·(step+1)/warmup_steps。",
             "warmup starts from 0 (max_lr*step/warmup_steps): step 0 gets rate 0 and is wasted; it is "
             "max_lr*(step+1)/warmup_steps.",
             ("max_lr * (step + 1) / warmup_steps", "max_lr * step / warmup_steps"))

fault.change("lr_at", "decays_to_zero",
             "余弦降到了 0 而不是 min_lr：应为 min_lr + ½(max_lr − min_lr)(1 + cos πp)。",
             "the cosine decays to 0 instead of min_lr: it is min_lr + (max_lr - min_lr)(1 + cos(pi p))/2.",
             ("return min_lr + 0.5 * (max_lr - min_lr) *", "return 0.5 * max_lr *"))

fault.change("lr_at", "progress_ignores_warmup",
             "余弦的进度没有扣掉 warmup：progress = (step − warmup_steps)/(total_steps − warmup_steps)，不是 step/total_steps；"
             "否则 warmup 一结束学习率就跳到 max_lr 之下。",
             "the cosine's progress ignores warmup: progress = (step - warmup_steps)/(total_steps - warmup_steps), not "
             "step/total_steps; otherwise the rate drops below max_lr the moment warmup ends.",
             ("max(0.0, (step - warmup_steps) / max(1, total_steps - warmup_steps))", "step / max(1, total_steps)"))

fault.change("lr_at", "progress_not_clipped",
             "进度没有截到 [0, 1]：过了 total_steps 以后余弦又往上走；之后应一直停在 min_lr。",
             "the progress is not clipped to [0, 1]: past total_steps the cosine climbs again; the rate stays at "
             "min_lr.",
             ("min(1.0, max(0.0, (step - warmup_steps) / max(1, total_steps - warmup_steps)))",
              "(step - warmup_steps) / max(1, total_steps - warmup_steps)"))

fault.change("lr_at", "no_argument_check",
             "没有检查参数：负的步数或 warmup_steps > total_steps 应抛出 ValueError，而不是悄悄算出一个数。",
             "the arguments are not checked: a negative step or warmup_steps > total_steps raises ValueError instead "
             "of quietly giving a number.",
             (STEP_CHECK, ""), (WARMUP_CHECK, ""))


# --- train_step ------------------------------------------------------------------------------

# lines of train.py's train_step that several faults move or drop
ZERO_GRAD = "optimizer.zero_grad(set_to_none=True)  # no stale gradients, and None for unused parameters\n"
LOSS_RAISE = ('raise FloatingPointError(f"损失不是有限数（loss = {loss.item()}），这一步没有更新任何参数。"\n'
              '                             f"\\n(the loss is not finite: {loss.item()}; no parameter was updated)")')
LOSS_CHECK = "if not torch.isfinite(loss):\n    " + LOSS_RAISE + "\n"
CLIP = "grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)"

fault.change("train_step", "grads_not_cleared",
             "没有清空旧梯度：backward 把新梯度加在上一步留下的梯度上。每步先 optimizer.zero_grad(set_to_none=True)。",
             "old gradients were not cleared: backward adds the new ones to what the last step left. Call "
             "optimizer.zero_grad(set_to_none=True) first.",
             (ZERO_GRAD, ""))

fault.change("train_step", "grads_zeroed_not_none",
             "梯度清成了 0 而不是 None（set_to_none=False）：没有参与这一步的参数也带着 0 梯度，动量和 AdamW 仍会推动它；用 zero_grad(set_to_none=True)。",
             "gradients were zeroed instead of set to None (set_to_none=False): a parameter that took no part still "
             "has a zero gradient, and momentum or AdamW still move it; use zero_grad(set_to_none=True).",
             ("set_to_none=True)", "set_to_none=False)"))

fault.change("train_step", "lr_not_set",
             "没有把 lr 写进每个参数组：学习率调度算出的值从未生效。",
             "lr was not written into every param group: the schedule's value never takes effect.",
             ("for group in optimizer.param_groups:\n    group[\"lr\"] = lr\n", ""))

fault.change("train_step", "check_after_step",
             "nan 检查放在了 backward 和 step 之后：等发现时 nan 已经写进了参数。检查要在反向传播之前。",
             "the nan check comes after backward and step: by the time it fires, nan is already in the parameters. "
             "Check before the backward pass.",
             (LOSS_CHECK, ""), ("optimizer.step()  # with the clipped gradients\n", "optimizer.step()\n" + LOSS_CHECK))

fault.change("train_step", "check_after_backward",
             "损失是否有限的检查放在了 backward 之后：nan 已经经反向传播写进了梯度。检查要紧接在前向之后、backward 之前，损失不是有限数时既不反向也不更新。",
             "the finiteness check comes after backward: the backward pass has already written nan into the gradients. "
             "Check right after the forward pass, before backward, so a non-finite loss gets neither a backward pass "
             "nor a step.",
             (LOSS_CHECK, ""),
             ("loss.backward()  # only once the loss is known to be finite\n", "loss.backward()\n" + LOSS_CHECK))

fault.change("train_step", "no_nan_check",
             "没有检查损失是否有限：一个 nan 的损失经 backward 和 step 会把所有参数都变成 nan。",
             "the loss is never checked: a nan loss goes through backward and step and turns every parameter into nan.",
             (LOSS_CHECK, ""))

fault.change("train_step", "wrong_exception",
             "损失不是有限数时抛出了别的异常（或消息里没有这个值）：约定是 FloatingPointError，消息写出损失的值。",
             "a non-finite loss raised another exception (or a message without the value): the contract is "
             "FloatingPointError whose message gives the loss.",
             (LOSS_RAISE, "raise RuntimeError(\"training diverged\")"))

fault.change("train_step", "message_without_value",
             "FloatingPointError 的消息里没有写出损失的值（nan 还是 inf）：排查时第一件要知道的就是它。",
             "the FloatingPointError's message does not give the loss (nan or inf): it is the first thing to know when "
             "looking for the cause.",
             (LOSS_RAISE, "raise FloatingPointError(\"training diverged\")"))

fault.change("train_step", "norm_after_clipping",
             "返回的是裁剪之后的范数：clip_grad_norm_ 的返回值就是裁剪前的总范数，它才告诉你梯度有多大。",
             "the norm returned is the one after clipping: clip_grad_norm_ returns the total norm before clipping, the "
             "figure that tells how large the gradient was.",
             (CLIP, "torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)\n"
                    "grad_norm = torch.sqrt(sum(p.grad.pow(2).sum() for p in model.parameters()\n"
                    "                           if p.grad is not None))"))

fault.change("train_step", "clip_after_step",
             "裁剪放在了 optimizer.step() 之后：这一步用的还是没裁剪的梯度。顺序是 backward → 裁剪 → step。",
             "clipping comes after optimizer.step(): this step used the unclipped gradients. The order is backward, "
             "clip, step.",
             (CLIP + "\noptimizer.step()  # with the clipped gradients", "optimizer.step()\n" + CLIP))

fault.change("train_step", "clip_by_value",
             "按值裁剪（clip_grad_value_）而不是按总范数裁剪：逐个截断会改变梯度的方向；clip_grad_norm_ 把所有梯度一起按同一个比例缩小。",
             "clipping by value (clip_grad_value_) instead of by the total norm: clamping entries one by one turns the "
             "gradient; clip_grad_norm_ scales all of them by one factor.",
             (CLIP, "grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), float(\"inf\"))\n"
                    "torch.nn.utils.clip_grad_value_(model.parameters(), max_grad_norm)"))

fault.change("train_step", "returns_tensors",
             "返回的是张量而不是 Python float：用 .item() 取出数值，否则记录的历史里会攥着整张计算图。",
             "tensors are returned instead of Python floats: take the numbers out with .item(), or the history keeps "
             "whole graphs alive.",
             ("return loss.item(), grad_norm.item()", "return loss.detach(), grad_norm"))


# --- evaluate --------------------------------------------------------------------------------

fault.change("evaluate", "mean_of_batch_means",
             "对各批的平均损失又取了一次简单平均：最后一批较小时，它的每个词元被算重了。要按词元数加权。",
             "the batch means were averaged with equal weights: when the last batch is smaller its tokens count too "
             "much. Weight by token counts.",
             ("loss.item() * y.numel()", "loss.item()"), ("count += y.numel()", "count += 1"))

fault.change("evaluate", "one_window_too_many",
             "窗口数算成了 len(data) // T：最后一个窗口的目标需要多一个 id，应为 (len(data) - 1) // T。",
             "the window count is len(data) // T: the last window's targets need one more id, so it is (len(data) - 1) "
             "// T.",
             ("windows = (len(data) - 1) // block_size", "windows = len(data) // block_size"))

fault.change("evaluate", "no_eval_mode",
             "没有切到评估模式（model.eval()）：dropout 还开着，评估的损失带着训练时的噪声。",
             "the model was not put in eval mode (model.eval()): dropout is still on and the held-out loss carries "
             "training noise.",
             ("model.eval()\n", ""))

fault.change("evaluate", "forced_train_after",
             "结束时无条件地 model.train()：调用前若处于评估模式，就被改掉了。要恢复调用前的模式。",
             "model.train() at the end, whatever the mode was: a model that was in eval mode is changed. Restore the "
             "mode it had.",
             ("model.train(was_training)", "model.train()"))

fault.change("evaluate", "left_in_eval",
             "评估后把模型留在了评估模式：训练循环接着训练时 dropout 就悄悄关掉了。要恢复调用前的模式。",
             "the model is left in eval mode: the training loop then goes on with dropout quietly off. Restore the "
             "mode it had.",
             ("model.train(was_training)", "pass  # the mode it had is never restored"))

fault.change("evaluate", "grad_enabled",
             "没有 torch.no_grad()：评估时也建了计算图，白占内存和时间。",
             "no torch.no_grad(): evaluation builds a graph too, wasting memory and time.",
             ("with torch.no_grad():", "with torch.enable_grad():  # where torch.no_grad() belongs"))


# --- next_token_probs ------------------------------------------------------------------------

# the argument checks, as they read in train.py
TEMPERATURE_CHECK = ('if temperature < 0:\n'
                     '    raise ValueError(f"temperature={temperature}：温度不能为负 (temperature cannot be negative)")\n')
TOP_K_CHECK = ('if top_k is not None and top_k < 1:\n'
               '    raise ValueError(f"top_k={top_k}：至少保留一个候选 (top_k keeps at least one candidate)")\n')

fault.change("next_token_probs", "temperature_multiplies",
             "logits 乘了温度而不是除以温度：温度低应让分布更尖，乘法恰好相反。",
             "the logits were multiplied by the temperature instead of divided: a low temperature should sharpen the "
             "distribution, and multiplying does the opposite.",
             ("scaled = logits / temperature", "scaled = logits * temperature"))

# softmax written out without subtracting the maximum: fine for small logits, inf/inf = NaN for large ones
fault.change("next_token_probs", "softmax_unshifted",
             "softmax 写成了 exp(z)/Σexp(z)，没有先减去最大值：logits 较大时 float32 的 exp 溢出为 inf（exp(90) 已超过"
             " 3.4×10³⁸），inf/inf 得到 NaN；很负时 exp 全下溢为 0，0/0 也是 NaN。先减去每行的最大值（或用 torch.softmax）。",
             "softmax written as exp(z)/sum(exp(z)) without subtracting the maximum: for large logits float32 exp "
             "overflows to inf (exp(90) is already above 3.4e38) and inf/inf gives NaN; for very negative ones every exp "
             "underflows to 0, and 0/0 is NaN too. Subtract each row's maximum first (or use torch.softmax).",
             ("return torch.softmax(scaled, dim=-1)",
              "exps = torch.exp(scaled)\nreturn exps / exps.sum(dim=-1, keepdim=True)"))

# the temperature applied in place: the probabilities are right, the caller's logits are divided
fault.change("next_token_probs", "scaled_in_place",
             "除以温度时对 logits 本身做了原地操作（div_ 或 /=）：返回的概率没错，但调用者的 logits 被改写了；生成时"
             "同一份 logits 若再用一次（换个温度再采样、记录日志），就已经被除过了。",
             "the temperature applied in place to logits itself (div_ or /=): the probabilities are right, but the "
             "caller's logits are overwritten; using the same logits again (sampling at another temperature, logging "
             "them) reads values already divided.",
             ("scaled = logits / temperature", "scaled = logits.div_(temperature)"))

fault.change("next_token_probs", "ties_dropped",
             "top-k 只按 topk 的下标保留了恰好 k 个：与第 k 大的值并列的词元也要保留。",
             "top-k kept exactly k entries by topk's indices: entries tied with the k-th largest value are kept too.",
             ("threshold = torch.topk(scaled, top_k, dim=-1).values[..., -1:]",
              "keep = torch.zeros_like(scaled, dtype=torch.bool)"
              ".scatter_(-1, torch.topk(scaled, top_k, dim=-1).indices, True)"),
             ("scaled < threshold", "~keep"))

fault.change("next_token_probs", "masked_with_zero",
             "top-k 之外的 logit 被设成了 0 而不是 -inf：它们的概率不为 0，仍可能被抽到。",
             "the logits outside the top k were set to 0 instead of -inf: their probabilities are not 0 and they can "
             "still be drawn.",
             ("float(\"-inf\"))", "0.0)"))

fault.change("next_token_probs", "zero_temperature_divides",
             "temperature = 0 没有单独处理：除以 0 得到 inf 和 nan；温度 0 的意思是贪心，返回 argmax 处的 one-hot。",
             "temperature 0 is not handled on its own: dividing by 0 gives inf and nan; temperature 0 means greedy, a "
             "one-hot at the argmax.",
             ("if temperature == 0:\n"
              "    return F.one_hot(logits.argmax(dim=-1), logits.shape[-1]).to(logits.dtype)\n", ""))

fault.change("next_token_probs", "softmax_over_batch",
             "softmax 沿批量轴（dim=0）做了：每一行（每个序列）各自在词表上归一化，应沿最后一根轴。",
             "softmax ran over the batch axis (dim=0): each row (each sequence) is normalised over the vocabulary, the "
             "last axis.",
             ("return torch.softmax(scaled, dim=-1)", "return torch.softmax(scaled, dim=0)"))

fault.change("next_token_probs", "no_argument_check_probs",
             "没有检查参数：负温度或 top_k < 1 应抛出 ValueError；top_k 大于词表时保留全部，而不是报错。",
             "the arguments are not checked: a negative temperature or top_k < 1 raises ValueError; a top_k larger "
             "than the vocabulary keeps everything instead of failing.",
             (TEMPERATURE_CHECK, ""), (TOP_K_CHECK, ""),
             ("top_k is not None and top_k < scaled.shape[-1]", "top_k is not None"))


# --- generate --------------------------------------------------------------------------------

# lines of train.py's generate that several faults change or drop
LENGTH_CHECK = ('if idx.shape[1] + max_new_tokens > block_size:\n'
                '    raise ValueError(f"提示 {idx.shape[1]} 个词元再生成 {max_new_tokens} 个，超过了 block_size={block_size}"\n'
                '                     f"（学习式位置只有这么多行）\\n(a prompt of {idx.shape[1]} plus {max_new_tokens} new '
                'tokens "\n'
                '                     f"exceeds block_size={block_size}: learned positions stop there)")\n')
FEED_NEWEST = "out = model(idx[:, -1:], past_key_values=past, use_cache=True)"

fault.change("generate", "greedy_by_sampling",
             "温度为 0 时也用 torch.multinomial 抽样（在 one-hot 分布上）：选出的词元碰巧相同，但抽样用掉了 generator "
             "的随机数，之后同一个种子生成的文本就变了。规则是温度 0 取 argmax，不抽任何随机数。",
             "at temperature 0 the token is still drawn with torch.multinomial (from a one-hot distribution): the "
             "token happens to be the same, but the draw uses up the generator's random numbers, so the same seed "
             "generates other text afterwards. The rule is the argmax at temperature 0, drawing nothing.",
             ("token = last.argmax(dim=-1, keepdim=True)",
              "token = torch.multinomial(next_token_probs(last, 0.0, top_k), 1, generator=generator)"))

fault.change("generate", "cache_never_used",
             "有缓存时从没用上缓存：每一步都把整段序列从头算一遍。第一次之后只喂最新的词元，并传入 past_key_values。",
             "with the cache requested, the cache is never used: every step recomputes the whole sequence. After the "
             "first call feed only the newest token, with past_key_values.",
             (FEED_NEWEST, "out = model(idx, use_cache=True)"))

fault.change("generate", "uncached_without_context",
             "不带缓存时只喂了最新的一个词元：没有缓存，模型就看不到前文。每一步要把整段序列喂进去。",
             "without the cache only the newest token is fed: with no cache the model cannot see the context. Feed the "
             "whole sequence every step.",
             ("logits = model(idx).logits", "logits = model(idx[:, -1:]).logits"))

fault.change("generate", "own_softmax",
             "采样时没有调用 next_token_probs（自己写了 softmax）：温度、top-k 的规则只在 next_token_probs 里维护一处。",
             "sampling does not call next_token_probs (a softmax of its own instead): the temperature and top-k rules "
             "live in next_token_probs, in one place.",
             ("next_token_probs(last, temperature, top_k)", "torch.softmax(last / temperature, dim=-1)"))

fault.change("generate", "top_k_not_passed",
             "调用 next_token_probs 时漏传了 top_k（或温度）：采样设置没有生效。",
             "next_token_probs is called without top_k (or the temperature): the sampling settings never take effect.",
             ("next_token_probs(last, temperature, top_k)", "next_token_probs(last, temperature)"))

fault.change("generate", "samples_without_generator",
             "torch.multinomial 没有传入 generator：采样用的是全局随机数，同一个随机种子给不出同一段文字。调用时写上 generator=generator。",
             "torch.multinomial is called without the generator: sampling draws from the global random state, so the "
             "same seed does not give the same text again. Pass generator=generator.",
             ("1, generator=generator)", "1)"))

fault.change("generate", "no_length_check",
             "没有检查长度：提示加新词元超过 block_size 时应先抛出 ValueError，学习式位置只有 block_size 行。",
             "the length is not checked: a prompt plus new tokens beyond block_size raises ValueError first; learned "
             "positions have block_size rows.",
             (LENGTH_CHECK, ""))

# its error message is English only: the English feedback quotes, word for word, an error the
# reference does not raise, and tests/test_feedback_language.py cannot tell a Chinese message
# quoted there from the grader's own words
fault.change("generate", "length_check_off_by_one",
             "长度检查差了一个（用了 >=）：T0 + max_new_tokens 恰好等于 block_size 是允许的，只有超过 block_size 时才抛出 ValueError。",
             "the length check is off by one (>=): T0 + max_new_tokens equal to block_size is allowed; raise "
             "ValueError only when it exceeds block_size.",
             (LENGTH_CHECK, "if idx.shape[1] + max_new_tokens >= block_size:\n"
                            "    raise ValueError(f\"a prompt of {idx.shape[1]} plus {max_new_tokens} new tokens \"\n"
                            "                     f\"reaches block_size={block_size}\")\n"))

fault.change("generate", "training_mode_generation",
             "生成时没有切到评估模式、没有 torch.no_grad()：dropout 开着，每一步还白建计算图。",
             "generation runs neither in eval mode nor under torch.no_grad(): dropout is on and every step builds a "
             "graph for nothing.",
             ("model.eval()\n", ""),
             ("with torch.no_grad():", "with torch.enable_grad():  # where torch.no_grad() belongs"))

fault.change("generate", "mode_not_restored",
             "生成后把模型留在了评估模式：要恢复调用前的训练/评估模式。",
             "the model is left in eval mode after generating: restore the training or eval mode it had.",
             ("model.train(was_training)", "pass  # the mode it had is never restored"))

fault.change("generate", "prompt_dropped",
             "只返回了新生成的词元：输出应是 [B, T0 + max_new_tokens]，开头原样保留提示。",
             "only the new tokens are returned: the output is [B, T0 + max_new_tokens] and starts with the prompt.",
             ("return idx", "return idx[:, idx.shape[1] - max_new_tokens :]"))

fault.change("generate", "whole_sequence_with_cache",
             "有缓存时每一步仍把整段序列再喂一遍（还带着缓存）：缓存里已有的位置被算了两次。之后每步只喂最新的一个词元。",
             "with the cache, every step feeds the whole sequence again (with the cache as well): positions already in "
             "the cache are counted twice. Feed only the newest token after the first call.",
             (FEED_NEWEST, "out = model(idx, past_key_values=past, use_cache=True)"))


# --- the rules, from the independent set (issue 39) ---------------------------------------------


fault.change("next_token_probs", "greedy_before_checks",
             "温度为 0 时先返回了 argmax，没有检查 top_k：参数的规则在每个温度下都成立，top_k < 1 时抛出 ValueError。",
             "with temperature 0 the argmax was returned before top_k was checked: the arguments' rules hold at every "
             "temperature, and top_k < 1 raises ValueError.",
             (TOP_K_CHECK, ""),
             ("scaled = logits / temperature", TOP_K_CHECK + "scaled = logits / temperature"))


@fault("parameter_groups",
       "逐个模块取它自己的参数（named_parameters(recurse=False)）：两个模块共用的权重被列了两次。每个参数只列一次，"
       "按 model.named_parameters() 的顺序和名字。",
       "each module's own parameters were taken module by module (named_parameters(recurse=False)): a weight two "
       "modules share is listed twice. Each parameter is listed once, in model.named_parameters()'s order and names.")
def per_module_walk(model, weight_decay):
    decay = {"params": [], "names": [], "weight_decay": weight_decay}
    no_decay = {"params": [], "names": [], "weight_decay": 0.0}
    for prefix, module in model.named_modules():
        for local, parameter in module.named_parameters(recurse=False):
            if parameter.requires_grad:
                group = decay if isinstance(module, nn.Linear) and local == "weight" else no_decay
                group["params"].append(parameter)
                group["names"].append(f"{prefix}.{local}" if prefix else local)
    return [decay, no_decay]

# rebuilt from Python numbers: right on the CPU, on the CPU whatever the data's device (the meta case shows it)
fault.change("get_batch", "batch_rebuilt_from_numbers",
             "批次没有建在数据所在的设备上：数据在 meta 设备（只有形状、没有数值）上时，你的代码从中读出了数值"
             "或把它搬到了 CPU（.tolist()、.item()、.cpu()、torch.tensor(.."
             ".)）。直接切片、堆叠数据。",
             "the batch is not built on the data's device: with data on the meta device (shapes, no values) your"
             " code read values out of it or moved it to the CPU (.tolist(), .item(), .cpu(), torch.tensor(...))."
             " Slice and stack the data where it is.",
             ("x = torch.stack([data[s : s + block_size] for s in starts])",
              "x = torch.tensor([data[s : s + block_size].tolist() for s in starts])"), observed=True)

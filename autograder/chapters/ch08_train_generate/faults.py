"""Known misconceptions of chapter 8, each written as a faulty exercise body.

Diagnosis (outputs equal to a fault's name its misconception in the feedback) and samples
(`hero samples OUT` writes one faulty submission per fault).  Each function has the signature of
the exercise it replaces and uses only names that train.py itself imports (math, sys, time,
torch, F, nn); `next_token_probs` inside a generate body is train.py's own, called by name.
"""

import math  # noqa: F401  (used by fault bodies)

import torch  # noqa: F401
import torch.nn.functional as F  # noqa: F401
from torch import nn  # noqa: F401

from autograder.registry import catalogue

CATALOGUE, fault = catalogue("fault")


# --- get_batch -----------------------------------------------------------------------------


@fault("get_batch", "y 没有右移一位：目标应是每个位置的下一个词元 data[s+1 : s+T+1]，而不是输入本身。",
       "y is not shifted by one: the targets are each position's next token, data[s+1 : s+T+1], not the inputs.")
def targets_not_shifted(data, block_size, batch_size, generator=None):
    starts = torch.randint(len(data) - block_size, (batch_size,), generator=generator)
    x = torch.stack([data[s : s + block_size] for s in starts.tolist()])
    return x, x.clone()


@fault("get_batch", "起点的上界多了 1（len(data) - T + 1）：从最后那个起点取的窗口，目标会越过数据末尾。",
       "the starts' bound is one too large (len(data) - T + 1): a window from the last start has targets past the "
       "end of the data.")
def start_bound_too_high(data, block_size, batch_size, generator=None):
    starts = torch.randint(len(data) - block_size + 1, (batch_size,), generator=generator)
    x = torch.stack([data[s : s + block_size] for s in starts.tolist()])
    y = torch.stack([data[s + 1 : s + 1 + block_size] for s in starts.tolist()])
    return x, y


@fault("get_batch", "没有用传入的 generator 抽起点：同一个种子不再给出同一批，训练也就无法复现。",
       "the starts are not drawn with the generator passed in: the same seed no longer gives the same batch, so a "
       "run cannot be repeated.")
def generator_ignored(data, block_size, batch_size, generator=None):
    starts = torch.randint(len(data) - block_size, (batch_size,))
    x = torch.stack([data[s : s + block_size] for s in starts.tolist()])
    y = torch.stack([data[s + 1 : s + 1 + block_size] for s in starts.tolist()])
    return x, y


@fault("get_batch", "批量轴和时间轴放反了：x、y 应是 [B, T]（每行一个窗口），不是 [T, B]。",
       "the batch and time axes are swapped: x and y are [B, T] (one window per row), not [T, B].")
def batch_time_swapped(data, block_size, batch_size, generator=None):
    starts = torch.randint(len(data) - block_size, (batch_size,), generator=generator)
    x = torch.stack([data[s : s + block_size] for s in starts.tolist()], dim=1)
    y = torch.stack([data[s + 1 : s + 1 + block_size] for s in starts.tolist()], dim=1)
    return x, y


# --- parameter_groups ------------------------------------------------------------------------


@fault("parameter_groups", "用了 p.ndim < 2 的规则：它会让嵌入表也衰减。嵌入表的行是查出来的，只在那个字出现时才有梯度，"
       "而衰减每一步都缩小每一行。",
       "the p.ndim < 2 rule: it decays the embedding tables too. An embedding's rows are looked up and get a gradient "
       "only when their token appears, while decay shrinks every row every step.")
def ndim_rule(model, weight_decay):
    groups = [{"params": [], "names": [], "weight_decay": weight_decay},
              {"params": [], "names": [], "weight_decay": 0.0}]
    for name, parameter in model.named_parameters():
        if parameter.requires_grad:
            group = groups[1] if parameter.ndim < 2 else groups[0]
            group["params"].append(parameter)
            group["names"].append(name)
    return groups


@fault("parameter_groups", "把冻结的参数（requires_grad=False）也交给了优化器；只收可训练的参数。",
       "frozen parameters (requires_grad=False) were handed to the optimiser too; take trainable ones only.")
def frozen_included(model, weight_decay):
    linear = {id(m.weight) for m in model.modules() if isinstance(m, nn.Linear)}
    groups = [{"params": [], "names": [], "weight_decay": weight_decay},
              {"params": [], "names": [], "weight_decay": 0.0}]
    for name, parameter in model.named_parameters():
        group = groups[0] if id(parameter) in linear else groups[1]
        group["params"].append(parameter)
        group["names"].append(name)
    return groups


@fault("parameter_groups", "两组的顺序或衰减值放反了：第一组衰减（weight_decay），第二组不衰减（0.0）。",
       "the groups' order or decay values are swapped: the first group decays (weight_decay), the second does not (0.0).")
def groups_swapped(model, weight_decay):
    linear = {id(m.weight) for m in model.modules() if isinstance(m, nn.Linear)}
    groups = [{"params": [], "names": [], "weight_decay": 0.0},
              {"params": [], "names": [], "weight_decay": weight_decay}]
    for name, parameter in model.named_parameters():
        if parameter.requires_grad:
            group = groups[1] if id(parameter) in linear else groups[0]
            group["params"].append(parameter)
            group["names"].append(name)
    return groups


@fault("parameter_groups", "按名字里有没有 \"weight\" 来分：LayerNorm 的 gamma 也叫 weight，嵌入表也叫 weight，它们都不该衰减。",
       "split by whether the name contains \"weight\": LayerNorm's gamma is called weight too, and so are the embedding "
       "tables; none of them should decay.")
def weight_in_name(model, weight_decay):
    groups = [{"params": [], "names": [], "weight_decay": weight_decay},
              {"params": [], "names": [], "weight_decay": 0.0}]
    for name, parameter in model.named_parameters():
        if parameter.requires_grad:
            group = groups[0] if name.endswith("weight") else groups[1]
            group["params"].append(parameter)
            group["names"].append(name)
    return groups


# --- lr_at -----------------------------------------------------------------------------------


@fault("lr_at", "warmup 从 0 开始（max_lr·step/warmup_steps）：第 0 步的学习率是 0，这一步白做；应为 max_lr·(step+1)/warmup_steps。",
       "warmup starts from 0 (max_lr*step/warmup_steps): step 0 gets rate 0 and is wasted; it is "
       "max_lr*(step+1)/warmup_steps.")
def warmup_from_zero(step, *, max_lr, min_lr, warmup_steps, total_steps):
    if step < 0 or warmup_steps > total_steps:
        raise ValueError("bad schedule")
    if step < warmup_steps:
        return max_lr * step / warmup_steps
    progress = min(1.0, max(0.0, (step - warmup_steps) / max(1, total_steps - warmup_steps)))
    return min_lr + 0.5 * (max_lr - min_lr) * (1.0 + math.cos(math.pi * progress))


@fault("lr_at", "余弦降到了 0 而不是 min_lr：应为 min_lr + ½(max_lr − min_lr)(1 + cos πp)。",
       "the cosine decays to 0 instead of min_lr: it is min_lr + (max_lr - min_lr)(1 + cos(pi p))/2.")
def decays_to_zero(step, *, max_lr, min_lr, warmup_steps, total_steps):
    if step < 0 or warmup_steps > total_steps:
        raise ValueError("bad schedule")
    if step < warmup_steps:
        return max_lr * (step + 1) / warmup_steps
    progress = min(1.0, max(0.0, (step - warmup_steps) / max(1, total_steps - warmup_steps)))
    return 0.5 * max_lr * (1.0 + math.cos(math.pi * progress))


@fault("lr_at", "余弦的进度没有扣掉 warmup：progress = (step − warmup_steps)/(total_steps − warmup_steps)，"
       "不是 step/total_steps；否则 warmup 一结束学习率就跳到 max_lr 之下。",
       "the cosine's progress ignores warmup: progress = (step - warmup_steps)/(total_steps - warmup_steps), not "
       "step/total_steps; otherwise the rate drops below max_lr the moment warmup ends.")
def progress_ignores_warmup(step, *, max_lr, min_lr, warmup_steps, total_steps):
    if step < 0 or warmup_steps > total_steps:
        raise ValueError("bad schedule")
    if step < warmup_steps:
        return max_lr * (step + 1) / warmup_steps
    progress = min(1.0, step / max(1, total_steps))
    return min_lr + 0.5 * (max_lr - min_lr) * (1.0 + math.cos(math.pi * progress))


@fault("lr_at", "进度没有截到 [0, 1]：过了 total_steps 以后余弦又往上走；之后应一直停在 min_lr。",
       "the progress is not clipped to [0, 1]: past total_steps the cosine climbs again; the rate stays at min_lr.")
def progress_not_clipped(step, *, max_lr, min_lr, warmup_steps, total_steps):
    if step < 0 or warmup_steps > total_steps:
        raise ValueError("bad schedule")
    if step < warmup_steps:
        return max_lr * (step + 1) / warmup_steps
    progress = (step - warmup_steps) / max(1, total_steps - warmup_steps)
    return min_lr + 0.5 * (max_lr - min_lr) * (1.0 + math.cos(math.pi * progress))


@fault("lr_at", "没有检查参数：负的步数或 warmup_steps > total_steps 应抛出 ValueError，而不是悄悄算出一个数。",
       "the arguments are not checked: a negative step or warmup_steps > total_steps raises ValueError instead of "
       "quietly giving a number.")
def no_argument_check(step, *, max_lr, min_lr, warmup_steps, total_steps):
    if step < warmup_steps:
        return max_lr * (step + 1) / warmup_steps
    progress = min(1.0, max(0.0, (step - warmup_steps) / max(1, total_steps - warmup_steps)))
    return min_lr + 0.5 * (max_lr - min_lr) * (1.0 + math.cos(math.pi * progress))


# --- train_step ------------------------------------------------------------------------------


@fault("train_step", "没有清空旧梯度：backward 把新梯度加在上一步留下的梯度上。每步先 optimizer.zero_grad(set_to_none=True)。",
       "old gradients were not cleared: backward adds the new ones to what the last step left. Call "
       "optimizer.zero_grad(set_to_none=True) first.")
def grads_not_cleared(model, optimizer, inputs, targets, lr, max_grad_norm=1.0):
    for group in optimizer.param_groups:
        group["lr"] = lr
    loss = model(inputs, targets).loss
    if not torch.isfinite(loss):
        raise FloatingPointError(f"loss = {loss.item()}")
    loss.backward()
    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()
    return loss.item(), grad_norm.item()


@fault("train_step", "梯度清成了 0 而不是 None（set_to_none=False）：没有参与这一步的参数也带着 0 梯度，"
       "动量和 AdamW 仍会推动它；用 zero_grad(set_to_none=True)。",
       "gradients were zeroed instead of set to None (set_to_none=False): a parameter that took no part still has a "
       "zero gradient, and momentum or AdamW still move it; use zero_grad(set_to_none=True).")
def grads_zeroed_not_none(model, optimizer, inputs, targets, lr, max_grad_norm=1.0):
    for group in optimizer.param_groups:
        group["lr"] = lr
    optimizer.zero_grad(set_to_none=False)
    loss = model(inputs, targets).loss
    if not torch.isfinite(loss):
        raise FloatingPointError(f"loss = {loss.item()}")
    loss.backward()
    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()
    return loss.item(), grad_norm.item()


@fault("train_step", "没有把 lr 写进每个参数组：学习率调度算出的值从未生效。",
       "lr was not written into every param group: the schedule's value never takes effect.")
def lr_not_set(model, optimizer, inputs, targets, lr, max_grad_norm=1.0):
    optimizer.zero_grad(set_to_none=True)
    loss = model(inputs, targets).loss
    if not torch.isfinite(loss):
        raise FloatingPointError(f"loss = {loss.item()}")
    loss.backward()
    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()
    return loss.item(), grad_norm.item()


@fault("train_step", "nan 检查放在了 backward 和 step 之后：等发现时 nan 已经写进了参数。检查要在反向传播之前。",
       "the nan check comes after backward and step: by the time it fires, nan is already in the parameters. Check "
       "before the backward pass.")
def check_after_step(model, optimizer, inputs, targets, lr, max_grad_norm=1.0):
    for group in optimizer.param_groups:
        group["lr"] = lr
    optimizer.zero_grad(set_to_none=True)
    loss = model(inputs, targets).loss
    loss.backward()
    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()
    if not torch.isfinite(loss):
        raise FloatingPointError(f"loss = {loss.item()}")
    return loss.item(), grad_norm.item()


@fault("train_step", "没有检查损失是否有限：一个 nan 的损失经 backward 和 step 会把所有参数都变成 nan。",
       "the loss is never checked: a nan loss goes through backward and step and turns every parameter into nan.")
def no_nan_check(model, optimizer, inputs, targets, lr, max_grad_norm=1.0):
    for group in optimizer.param_groups:
        group["lr"] = lr
    optimizer.zero_grad(set_to_none=True)
    loss = model(inputs, targets).loss
    loss.backward()
    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()
    return loss.item(), grad_norm.item()


@fault("train_step", "损失不是有限数时抛出了别的异常（或消息里没有这个值）：约定是 FloatingPointError，消息写出损失的值。",
       "a non-finite loss raised another exception (or a message without the value): the contract is "
       "FloatingPointError whose message gives the loss.")
def wrong_exception(model, optimizer, inputs, targets, lr, max_grad_norm=1.0):
    for group in optimizer.param_groups:
        group["lr"] = lr
    optimizer.zero_grad(set_to_none=True)
    loss = model(inputs, targets).loss
    if not torch.isfinite(loss):
        raise RuntimeError("training diverged")
    loss.backward()
    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()
    return loss.item(), grad_norm.item()


@fault("train_step", "FloatingPointError 的消息里没有写出损失的值（nan 还是 inf）：排查时第一件要知道的就是它。",
       "the FloatingPointError's message does not give the loss (nan or inf): it is the first thing to know when "
       "looking for the cause.")
def message_without_value(model, optimizer, inputs, targets, lr, max_grad_norm=1.0):
    for group in optimizer.param_groups:
        group["lr"] = lr
    optimizer.zero_grad(set_to_none=True)
    loss = model(inputs, targets).loss
    if not torch.isfinite(loss):
        raise FloatingPointError("训练发散 (training diverged)")
    loss.backward()
    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()
    return loss.item(), grad_norm.item()


@fault("train_step", "返回的是裁剪之后的范数：clip_grad_norm_ 的返回值就是裁剪前的总范数，它才告诉你梯度有多大。",
       "the norm returned is the one after clipping: clip_grad_norm_ returns the total norm before clipping, the "
       "figure that tells how large the gradient was.")
def norm_after_clipping(model, optimizer, inputs, targets, lr, max_grad_norm=1.0):
    for group in optimizer.param_groups:
        group["lr"] = lr
    optimizer.zero_grad(set_to_none=True)
    loss = model(inputs, targets).loss
    if not torch.isfinite(loss):
        raise FloatingPointError(f"loss = {loss.item()}")
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    grad_norm = torch.sqrt(sum(p.grad.pow(2).sum() for p in model.parameters() if p.grad is not None))
    optimizer.step()
    return loss.item(), grad_norm.item()


@fault("train_step", "裁剪放在了 optimizer.step() 之后：这一步用的还是没裁剪的梯度。顺序是 backward → 裁剪 → step。",
       "clipping comes after optimizer.step(): this step used the unclipped gradients. The order is backward, clip, "
       "step.")
def clip_after_step(model, optimizer, inputs, targets, lr, max_grad_norm=1.0):
    for group in optimizer.param_groups:
        group["lr"] = lr
    optimizer.zero_grad(set_to_none=True)
    loss = model(inputs, targets).loss
    if not torch.isfinite(loss):
        raise FloatingPointError(f"loss = {loss.item()}")
    loss.backward()
    optimizer.step()
    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    return loss.item(), grad_norm.item()


@fault("train_step", "按值裁剪（clip_grad_value_）而不是按总范数裁剪：逐个截断会改变梯度的方向；"
       "clip_grad_norm_ 把所有梯度一起按同一个比例缩小。",
       "clipping by value (clip_grad_value_) instead of by the total norm: clamping entries one by one turns the "
       "gradient; clip_grad_norm_ scales all of them by one factor.")
def clip_by_value(model, optimizer, inputs, targets, lr, max_grad_norm=1.0):
    for group in optimizer.param_groups:
        group["lr"] = lr
    optimizer.zero_grad(set_to_none=True)
    loss = model(inputs, targets).loss
    if not torch.isfinite(loss):
        raise FloatingPointError(f"loss = {loss.item()}")
    loss.backward()
    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), float("inf"))
    torch.nn.utils.clip_grad_value_(model.parameters(), max_grad_norm)
    optimizer.step()
    return loss.item(), grad_norm.item()


@fault("train_step", "返回的是张量而不是 Python float：用 .item() 取出数值，否则记录的历史里会攥着整张计算图。",
       "tensors are returned instead of Python floats: take the numbers out with .item(), or the history keeps "
       "whole graphs alive.")
def returns_tensors(model, optimizer, inputs, targets, lr, max_grad_norm=1.0):
    for group in optimizer.param_groups:
        group["lr"] = lr
    optimizer.zero_grad(set_to_none=True)
    loss = model(inputs, targets).loss
    if not torch.isfinite(loss):
        raise FloatingPointError(f"loss = {loss.item()}")
    loss.backward()
    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()
    return loss.detach(), grad_norm


# --- evaluate --------------------------------------------------------------------------------


@fault("evaluate", "对各批的平均损失又取了一次简单平均：最后一批较小时，它的每个词元被算重了。要按词元数加权。",
       "the batch means were averaged with equal weights: when the last batch is smaller its tokens count too much. "
       "Weight by token counts.")
def mean_of_batch_means(model, data, block_size, batch_size):
    windows = (len(data) - 1) // block_size
    was_training = model.training
    model.eval()
    losses = []
    with torch.no_grad():
        for first in range(0, windows, batch_size):
            rows = range(first, min(first + batch_size, windows))
            x = torch.stack([data[i * block_size : (i + 1) * block_size] for i in rows])
            y = torch.stack([data[i * block_size + 1 : (i + 1) * block_size + 1] for i in rows])
            losses.append(model(x, y).loss.item())
    model.train(was_training)
    return sum(losses) / len(losses)


@fault("evaluate", "窗口数算成了 len(data) // T：最后一个窗口的目标需要多一个 id，应为 (len(data) - 1) // T。",
       "the window count is len(data) // T: the last window's targets need one more id, so it is (len(data) - 1) // T.")
def one_window_too_many(model, data, block_size, batch_size):
    windows = len(data) // block_size
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for first in range(0, windows, batch_size):
            rows = range(first, min(first + batch_size, windows))
            x = torch.stack([data[i * block_size : (i + 1) * block_size] for i in rows])
            y = torch.stack([data[i * block_size + 1 : (i + 1) * block_size + 1] for i in rows])
            total += model(x, y).loss.item() * y.numel()
            count += y.numel()
    model.train(was_training)
    return total / count


@fault("evaluate", "没有切到评估模式（model.eval()）：dropout 还开着，评估的损失带着训练时的噪声。",
       "the model was not put in eval mode (model.eval()): dropout is still on and the held-out loss carries "
       "training noise.")
def no_eval_mode(model, data, block_size, batch_size):
    windows = (len(data) - 1) // block_size
    total, count = 0.0, 0
    with torch.no_grad():
        for first in range(0, windows, batch_size):
            rows = range(first, min(first + batch_size, windows))
            x = torch.stack([data[i * block_size : (i + 1) * block_size] for i in rows])
            y = torch.stack([data[i * block_size + 1 : (i + 1) * block_size + 1] for i in rows])
            total += model(x, y).loss.item() * y.numel()
            count += y.numel()
    return total / count


@fault("evaluate", "结束时无条件地 model.train()：调用前若处于评估模式，就被改掉了。要恢复调用前的模式。",
       "model.train() at the end, whatever the mode was: a model that was in eval mode is changed. Restore the mode it "
       "had.")
def forced_train_after(model, data, block_size, batch_size):
    windows = (len(data) - 1) // block_size
    model.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for first in range(0, windows, batch_size):
            rows = range(first, min(first + batch_size, windows))
            x = torch.stack([data[i * block_size : (i + 1) * block_size] for i in rows])
            y = torch.stack([data[i * block_size + 1 : (i + 1) * block_size + 1] for i in rows])
            total += model(x, y).loss.item() * y.numel()
            count += y.numel()
    model.train()
    return total / count


@fault("evaluate", "评估后把模型留在了评估模式：训练循环接着训练时 dropout 就悄悄关掉了。要恢复调用前的模式。",
       "the model is left in eval mode: the training loop then goes on with dropout quietly off. Restore the mode it "
       "had.")
def left_in_eval(model, data, block_size, batch_size):
    windows = (len(data) - 1) // block_size
    model.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for first in range(0, windows, batch_size):
            rows = range(first, min(first + batch_size, windows))
            x = torch.stack([data[i * block_size : (i + 1) * block_size] for i in rows])
            y = torch.stack([data[i * block_size + 1 : (i + 1) * block_size + 1] for i in rows])
            total += model(x, y).loss.item() * y.numel()
            count += y.numel()
    return total / count


@fault("evaluate", "没有 torch.no_grad()：评估时也建了计算图，白占内存和时间。",
       "no torch.no_grad(): evaluation builds a graph too, wasting memory and time.")
def grad_enabled(model, data, block_size, batch_size):
    windows = (len(data) - 1) // block_size
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    for first in range(0, windows, batch_size):
        rows = range(first, min(first + batch_size, windows))
        x = torch.stack([data[i * block_size : (i + 1) * block_size] for i in rows])
        y = torch.stack([data[i * block_size + 1 : (i + 1) * block_size + 1] for i in rows])
        total += model(x, y).loss.item() * y.numel()
        count += y.numel()
    model.train(was_training)
    return total / count


# --- next_token_probs ----------------------------------------------------------------------


@fault("next_token_probs", "logits 乘了温度而不是除以温度：温度低应让分布更尖，乘法恰好相反。",
       "the logits were multiplied by the temperature instead of divided: a low temperature should sharpen the "
       "distribution, and multiplying does the opposite.")
def temperature_multiplies(logits, temperature=1.0, top_k=None):
    if temperature < 0 or (top_k is not None and top_k < 1):
        raise ValueError("bad sampling settings")
    if temperature == 0:
        return F.one_hot(logits.argmax(dim=-1), logits.shape[-1]).to(logits.dtype)
    scaled = logits * temperature
    if top_k is not None and top_k < scaled.shape[-1]:
        threshold = torch.topk(scaled, top_k, dim=-1).values[..., -1:]
        scaled = scaled.masked_fill(scaled < threshold, float("-inf"))
    return torch.softmax(scaled, dim=-1)


@fault("next_token_probs", "top-k 只按 topk 的下标保留了恰好 k 个：与第 k 大的值并列的词元也要保留。",
       "top-k kept exactly k entries by topk's indices: entries tied with the k-th largest value are kept too.")
def ties_dropped(logits, temperature=1.0, top_k=None):
    if temperature < 0 or (top_k is not None and top_k < 1):
        raise ValueError("bad sampling settings")
    if temperature == 0:
        return F.one_hot(logits.argmax(dim=-1), logits.shape[-1]).to(logits.dtype)
    scaled = logits / temperature
    if top_k is not None and top_k < scaled.shape[-1]:
        keep = torch.zeros_like(scaled, dtype=torch.bool)
        keep.scatter_(-1, torch.topk(scaled, top_k, dim=-1).indices, True)
        scaled = scaled.masked_fill(~keep, float("-inf"))
    return torch.softmax(scaled, dim=-1)


@fault("next_token_probs", "top-k 之外的 logit 被设成了 0 而不是 -inf：它们的概率不为 0，仍可能被抽到。",
       "the logits outside the top k were set to 0 instead of -inf: their probabilities are not 0 and they can still "
       "be drawn.")
def masked_with_zero(logits, temperature=1.0, top_k=None):
    if temperature < 0 or (top_k is not None and top_k < 1):
        raise ValueError("bad sampling settings")
    if temperature == 0:
        return F.one_hot(logits.argmax(dim=-1), logits.shape[-1]).to(logits.dtype)
    scaled = logits / temperature
    if top_k is not None and top_k < scaled.shape[-1]:
        threshold = torch.topk(scaled, top_k, dim=-1).values[..., -1:]
        scaled = scaled.masked_fill(scaled < threshold, 0.0)
    return torch.softmax(scaled, dim=-1)


@fault("next_token_probs", "temperature = 0 没有单独处理：除以 0 得到 inf 和 nan；温度 0 的意思是贪心，返回 argmax 处的 one-hot。",
       "temperature 0 is not handled on its own: dividing by 0 gives inf and nan; temperature 0 means greedy, a "
       "one-hot at the argmax.")
def zero_temperature_divides(logits, temperature=1.0, top_k=None):
    if temperature < 0 or (top_k is not None and top_k < 1):
        raise ValueError("bad sampling settings")
    scaled = logits / temperature
    if top_k is not None and top_k < scaled.shape[-1]:
        threshold = torch.topk(scaled, top_k, dim=-1).values[..., -1:]
        scaled = scaled.masked_fill(scaled < threshold, float("-inf"))
    return torch.softmax(scaled, dim=-1)


@fault("next_token_probs", "softmax 沿批量轴（dim=0）做了：每一行（每个序列）各自在词表上归一化，应沿最后一根轴。",
       "softmax ran over the batch axis (dim=0): each row (each sequence) is normalised over the vocabulary, the "
       "last axis.")
def softmax_over_batch(logits, temperature=1.0, top_k=None):
    if temperature < 0 or (top_k is not None and top_k < 1):
        raise ValueError("bad sampling settings")
    if temperature == 0:
        return F.one_hot(logits.argmax(dim=-1), logits.shape[-1]).to(logits.dtype)
    scaled = logits / temperature
    if top_k is not None and top_k < scaled.shape[-1]:
        threshold = torch.topk(scaled, top_k, dim=-1).values[..., -1:]
        scaled = scaled.masked_fill(scaled < threshold, float("-inf"))
    return torch.softmax(scaled, dim=0)


@fault("next_token_probs", "没有检查参数：负温度或 top_k < 1 应抛出 ValueError；top_k 大于词表时保留全部，而不是报错。",
       "the arguments are not checked: a negative temperature or top_k < 1 raises ValueError; a top_k larger than "
       "the vocabulary keeps everything instead of failing.")
def no_argument_check_probs(logits, temperature=1.0, top_k=None):
    if temperature == 0:
        return F.one_hot(logits.argmax(dim=-1), logits.shape[-1]).to(logits.dtype)
    scaled = logits / temperature
    if top_k is not None:
        threshold = torch.topk(scaled, top_k, dim=-1).values[..., -1:]
        scaled = scaled.masked_fill(scaled < threshold, float("-inf"))
    return torch.softmax(scaled, dim=-1)


# --- generate --------------------------------------------------------------------------------


@fault("generate", "有缓存时从没用上缓存：每一步都把整段序列从头算一遍。第一次之后只喂最新的词元，并传入 past_key_values。",
       "with the cache requested, the cache is never used: every step recomputes the whole sequence. After the first "
       "call feed only the newest token, with past_key_values.")
def cache_never_used(model, idx, max_new_tokens, temperature=1.0, top_k=None, use_cache=True, generator=None):
    if idx.shape[1] + max_new_tokens > model.cfg.block_size:
        raise ValueError("too long for block_size")
    was_training = model.training
    model.eval()
    with torch.no_grad():
        for _ in range(max_new_tokens):
            logits = model(idx, use_cache=use_cache).logits
            last = logits[:, -1, :]
            token = (last.argmax(dim=-1, keepdim=True) if temperature == 0
                     else torch.multinomial(next_token_probs(last, temperature, top_k), 1, generator=generator))  # noqa: F821
            idx = torch.cat([idx, token], dim=1)
    model.train(was_training)
    return idx


@fault("generate", "不带缓存时只喂了最新的一个词元：没有缓存，模型就看不到前文。每一步要把整段序列喂进去。",
       "without the cache only the newest token is fed: with no cache the model cannot see the context. Feed the "
       "whole sequence every step.")
def uncached_without_context(model, idx, max_new_tokens, temperature=1.0, top_k=None, use_cache=True, generator=None):
    if idx.shape[1] + max_new_tokens > model.cfg.block_size:
        raise ValueError("too long for block_size")
    was_training = model.training
    model.eval()
    past = None
    with torch.no_grad():
        for _ in range(max_new_tokens):
            if use_cache:
                out = model(idx if past is None else idx[:, -1:], past_key_values=past, use_cache=True)
                logits, past = out.logits, out.past_key_values
            else:
                logits = model(idx[:, -1:]).logits
            last = logits[:, -1, :]
            token = (last.argmax(dim=-1, keepdim=True) if temperature == 0
                     else torch.multinomial(next_token_probs(last, temperature, top_k), 1, generator=generator))  # noqa: F821
            idx = torch.cat([idx, token], dim=1)
    model.train(was_training)
    return idx


@fault("generate", "采样时没有调用 next_token_probs（自己写了 softmax）：温度、top-k 的规则只在 next_token_probs 里维护一处。",
       "sampling does not call next_token_probs (a softmax of its own instead): the temperature and top-k rules live "
       "in next_token_probs, in one place.")
def own_softmax(model, idx, max_new_tokens, temperature=1.0, top_k=None, use_cache=True, generator=None):
    if idx.shape[1] + max_new_tokens > model.cfg.block_size:
        raise ValueError("too long for block_size")
    was_training = model.training
    model.eval()
    past = None
    with torch.no_grad():
        for _ in range(max_new_tokens):
            if use_cache:
                out = model(idx if past is None else idx[:, -1:], past_key_values=past, use_cache=True)
                logits, past = out.logits, out.past_key_values
            else:
                logits = model(idx).logits
            last = logits[:, -1, :]
            token = (last.argmax(dim=-1, keepdim=True) if temperature == 0
                     else torch.multinomial(torch.softmax(last / temperature, dim=-1), 1, generator=generator))
            idx = torch.cat([idx, token], dim=1)
    model.train(was_training)
    return idx


@fault("generate", "调用 next_token_probs 时漏传了 top_k（或温度）：采样设置没有生效。",
       "next_token_probs is called without top_k (or the temperature): the sampling settings never take effect.")
def top_k_not_passed(model, idx, max_new_tokens, temperature=1.0, top_k=None, use_cache=True, generator=None):
    if idx.shape[1] + max_new_tokens > model.cfg.block_size:
        raise ValueError("too long for block_size")
    was_training = model.training
    model.eval()
    past = None
    with torch.no_grad():
        for _ in range(max_new_tokens):
            if use_cache:
                out = model(idx if past is None else idx[:, -1:], past_key_values=past, use_cache=True)
                logits, past = out.logits, out.past_key_values
            else:
                logits = model(idx).logits
            last = logits[:, -1, :]
            token = (last.argmax(dim=-1, keepdim=True) if temperature == 0
                     else torch.multinomial(next_token_probs(last, temperature), 1, generator=generator))  # noqa: F821
            idx = torch.cat([idx, token], dim=1)
    model.train(was_training)
    return idx


@fault("generate", "没有检查长度：提示加新词元超过 block_size 时应先抛出 ValueError，学习式位置只有 block_size 行。",
       "the length is not checked: a prompt plus new tokens beyond block_size raises ValueError first; learned "
       "positions have block_size rows.")
def no_length_check(model, idx, max_new_tokens, temperature=1.0, top_k=None, use_cache=True, generator=None):
    was_training = model.training
    model.eval()
    past = None
    with torch.no_grad():
        for _ in range(max_new_tokens):
            if use_cache:
                out = model(idx if past is None else idx[:, -1:], past_key_values=past, use_cache=True)
                logits, past = out.logits, out.past_key_values
            else:
                logits = model(idx).logits
            last = logits[:, -1, :]
            token = (last.argmax(dim=-1, keepdim=True) if temperature == 0
                     else torch.multinomial(next_token_probs(last, temperature, top_k), 1, generator=generator))  # noqa: F821
            idx = torch.cat([idx, token], dim=1)
    model.train(was_training)
    return idx


@fault("generate", "生成时没有切到评估模式、没有 torch.no_grad()：dropout 开着，每一步还白建计算图。",
       "generation runs neither in eval mode nor under torch.no_grad(): dropout is on and every step builds a graph "
       "for nothing.")
def training_mode_generation(model, idx, max_new_tokens, temperature=1.0, top_k=None, use_cache=True, generator=None):
    if idx.shape[1] + max_new_tokens > model.cfg.block_size:
        raise ValueError("too long for block_size")
    past = None
    for _ in range(max_new_tokens):
        if use_cache:
            out = model(idx if past is None else idx[:, -1:], past_key_values=past, use_cache=True)
            logits, past = out.logits, out.past_key_values
        else:
            logits = model(idx).logits
        last = logits[:, -1, :].detach()
        token = (last.argmax(dim=-1, keepdim=True) if temperature == 0
                 else torch.multinomial(next_token_probs(last, temperature, top_k), 1, generator=generator))  # noqa: F821
        idx = torch.cat([idx, token], dim=1)
    return idx


@fault("generate", "生成后把模型留在了评估模式：要恢复调用前的训练/评估模式。",
       "the model is left in eval mode after generating: restore the training or eval mode it had.")
def mode_not_restored(model, idx, max_new_tokens, temperature=1.0, top_k=None, use_cache=True, generator=None):
    if idx.shape[1] + max_new_tokens > model.cfg.block_size:
        raise ValueError("too long for block_size")
    model.eval()
    past = None
    with torch.no_grad():
        for _ in range(max_new_tokens):
            if use_cache:
                out = model(idx if past is None else idx[:, -1:], past_key_values=past, use_cache=True)
                logits, past = out.logits, out.past_key_values
            else:
                logits = model(idx).logits
            last = logits[:, -1, :]
            token = (last.argmax(dim=-1, keepdim=True) if temperature == 0
                     else torch.multinomial(next_token_probs(last, temperature, top_k), 1, generator=generator))  # noqa: F821
            idx = torch.cat([idx, token], dim=1)
    return idx


@fault("generate", "只返回了新生成的词元：输出应是 [B, T0 + max_new_tokens]，开头原样保留提示。",
       "only the new tokens are returned: the output is [B, T0 + max_new_tokens] and starts with the prompt.")
def prompt_dropped(model, idx, max_new_tokens, temperature=1.0, top_k=None, use_cache=True, generator=None):
    if idx.shape[1] + max_new_tokens > model.cfg.block_size:
        raise ValueError("too long for block_size")
    was_training = model.training
    model.eval()
    start = idx.shape[1]
    past = None
    with torch.no_grad():
        for _ in range(max_new_tokens):
            if use_cache:
                out = model(idx if past is None else idx[:, -1:], past_key_values=past, use_cache=True)
                logits, past = out.logits, out.past_key_values
            else:
                logits = model(idx).logits
            last = logits[:, -1, :]
            token = (last.argmax(dim=-1, keepdim=True) if temperature == 0
                     else torch.multinomial(next_token_probs(last, temperature, top_k), 1, generator=generator))  # noqa: F821
            idx = torch.cat([idx, token], dim=1)
    model.train(was_training)
    return idx[:, start:]


@fault("generate", "有缓存时每一步仍把整段序列再喂一遍（还带着缓存）：缓存里已有的位置被算了两次。之后每步只喂最新的一个词元。",
       "with the cache, every step feeds the whole sequence again (with the cache as well): positions already in "
       "the cache are counted twice. Feed only the newest token after the first call.")
def whole_sequence_with_cache(model, idx, max_new_tokens, temperature=1.0, top_k=None, use_cache=True, generator=None):
    if idx.shape[1] + max_new_tokens > model.cfg.block_size:
        raise ValueError("too long for block_size")
    was_training = model.training
    model.eval()
    past = None
    with torch.no_grad():
        for _ in range(max_new_tokens):
            if use_cache:
                out = model(idx if past is None else idx[:, -2:], past_key_values=past, use_cache=True)
                logits, past = out.logits, out.past_key_values
            else:
                logits = model(idx).logits
            last = logits[:, -1, :]
            token = (last.argmax(dim=-1, keepdim=True) if temperature == 0
                     else torch.multinomial(next_token_probs(last, temperature, top_k), 1, generator=generator))  # noqa: F821
            idx = torch.cat([idx, token], dim=1)
    model.train(was_training)
    return idx

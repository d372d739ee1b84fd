"""Visible checks of chapter 8 (training and generation): properties you can test on your own code.

As in checks.py, each ``judge_*`` function looks at outputs only and returns ``None`` when the
property holds, or a ``(中文, English)`` pair that says what is wrong; the ``check_*`` functions
run your code on small inputs and raise ``AssertionError`` with the Chinese message.  The
autograder applies the same judges to the outputs of your code in its own process.
"""

import math

import torch

from .checks import (TOLERANCE, _passed, _raise_if, answered, show_tracebacks, standing_in,  # noqa: F401
                     visible_check)

MODULE = "train"


def _problem(zh, en):
    return (zh, en)


def _tensor_problem(value, what):
    if not isinstance(value, torch.Tensor):
        return _problem(f"{what}应是张量，实际是 {type(value).__name__}。", f"{what} should be a tensor, got {type(value).__name__}.")
    return None


# --- judges --------------------------------------------------------------------------------


def judge_batch(data, block_size, batch_size, x, y):
    """x and y are [B, T] int64; each row of x is a window data[s : s+T] with s < len(data) - T,
    and the same row of y is the window one place later."""
    for value, what in ((x, "x"), (y, "y")):
        problem = _tensor_problem(value, what)
        if problem:
            return problem
        if tuple(value.shape) != (batch_size, block_size) or value.dtype != torch.int64:
            return _problem(
                f"{what} 的形状是 {tuple(value.shape)}、dtype 是 {value.dtype}；应为 [batch_size, block_size] = "
                f"[{batch_size}, {block_size}]，int64。",
                f"{what} has shape {tuple(value.shape)} and dtype {value.dtype}; it should be [batch_size, block_size] "
                f"= [{batch_size}, {block_size}], int64.")
    data = data.to(x.device)
    for row in range(batch_size):
        found = any(torch.equal(data[s : s + block_size], x[row]) and torch.equal(data[s + 1 : s + 1 + block_size], y[row])
                    for s in range(len(data) - block_size))
        if not found:
            return _problem(
                f"第 {row} 行不是“x = data[s:s+T]、y = data[s+1:s+T+1]”这样一对窗口：y 应是同一段数据右移一位"
                "（每个位置的目标是下一个词元），而且 s + T 不能越过最后一个 id。",
                f"row {row} is not a pair of windows x = data[s:s+T], y = data[s+1:s+T+1]: y is the same stretch "
                "shifted by one (each position's target is the next token), and s + T stays inside the data.")
    return None


def judge_groups(summary, trainable_names, linear_weight_names, weight_decay):
    """`summary`: {"count", "decay", "decay_params", "decay_weight_decay", "no_decay", ...} (names
    of each group, the names of its parameters, its weight_decay)."""
    if summary.get("count") != 2:
        return _problem(f"应返回两个参数组（先衰减、后不衰减），实际返回了 {summary.get('count')} 个。",
                        f"two parameter groups are expected (decayed first, then not decayed), got {summary.get('count')}.")
    for label in ("decay", "no_decay"):
        if summary[label] != summary[label + "_params"]:
            return _problem(f"第 {0 if label == 'decay' else 1} 组的 \"names\" 与 \"params\" 对不上：两个列表要一一对应、顺序相同。",
                            f"group {0 if label == 'decay' else 1}'s \"names\" do not match its \"params\": the two lists "
                            "correspond one to one, in the same order.")
    if summary["decay_weight_decay"] != weight_decay or summary["no_decay_weight_decay"] != 0.0:
        return _problem("第一组的 weight_decay 应是传入的值，第二组应是 0.0。",
                        "the first group's weight_decay is the value passed in, the second group's is 0.0.")
    decay, no_decay = summary["decay"], summary["no_decay"]
    frozen = sorted(set(decay + no_decay) - set(trainable_names))
    if frozen:
        return _problem(f"冻结的参数（requires_grad=False）不该进入优化器：{', '.join(frozen)}。",
                        f"frozen parameters (requires_grad=False) do not belong to the optimiser: {', '.join(frozen)}.")
    embeddings = [n for n in decay if "embedding" in n]
    if embeddings:
        return _problem(
            f"嵌入表 {', '.join(embeddings)} 被放进了衰减组。按 p.ndim < 2 判断会这样做，但嵌入表的行是被查出来的、不是被乘的："
            "一个字只在出现时才有梯度，而解耦的衰减每一步都缩小每一行，稀有字的行会在两次出现之间被拉向 0。",
            f"the embedding tables {', '.join(embeddings)} are in the decayed group. The p.ndim < 2 rule does that, but an "
            "embedding's rows are looked up, not multiplied: a row gets a gradient only when its token appears, and "
            "decoupled decay shrinks every row every step, pulling rare characters' rows to zero between appearances.")
    vectors = [n for n in decay if n not in linear_weight_names]
    if vectors:
        return _problem(f"只有 nn.Linear 的权重矩阵才衰减；这些不该衰减：{', '.join(vectors)}（偏置、LayerNorm 的 gamma/beta，"
                        "以及不属于线性层的参数）。",
                        f"only the weight matrices of nn.Linear layers decay; these should not: {', '.join(vectors)} "
                        "(biases, LayerNorm gamma/beta, parameters of no linear layer).")
    expected_decay = [n for n in trainable_names if n in linear_weight_names]
    expected_rest = [n for n in trainable_names if n not in linear_weight_names]
    if sorted(decay) != sorted(expected_decay):
        missing = sorted(set(expected_decay) - set(decay))
        return _problem(f"这些线性层权重没有进衰减组：{', '.join(missing)}。",
                        f"these linear weights are missing from the decayed group: {', '.join(missing)}.")
    if sorted(no_decay) != sorted(expected_rest):
        return _problem("不衰减组应恰好包含其余每个可训练参数，各一次。",
                        "the group without decay holds every other trainable parameter, each once.")
    if decay != expected_decay or no_decay != expected_rest:
        return _problem("两组里参数的顺序应与 model.named_parameters() 相同。",
                        "the parameters of each group keep model.named_parameters() order.")
    return None


def judge_schedule(steps, lrs, max_lr, min_lr, warmup_steps, total_steps):
    """Linear warmup to max_lr at step warmup_steps - 1, then non-increasing, min_lr from total_steps on."""
    if not all(isinstance(v, float) for v in lrs):
        return _problem("lr_at 应返回 Python 的 float。", "lr_at returns a Python float.")
    close = lambda a, b: abs(a - b) <= TOLERANCE["atol"] * abs(max_lr) + TOLERANCE["rtol"] * abs(b)  # noqa: E731
    for step, lr in zip(steps, lrs):
        if step < warmup_steps and not close(lr, max_lr * (step + 1) / warmup_steps):
            return _problem(
                f"warmup 阶段（第 {step} 步）应线性上升：max_lr·(step+1)/warmup_steps，第 0 步就不为 0，"
                "最后一个 warmup 步恰好到 max_lr。",
                f"during warmup (step {step}) the rate rises linearly, max_lr*(step+1)/warmup_steps: not 0 at step 0, "
                "exactly max_lr at the last warmup step.")
        if step == warmup_steps < total_steps and not close(lr, max_lr):
            return _problem("warmup 结束后的第一步，余弦从 max_lr 开始（progress = 0）。",
                            "the first step after warmup starts the cosine at max_lr (progress 0).")
        if step >= total_steps and not close(lr, min_lr):
            return _problem(f"第 {step} 步已到 total_steps 之后，学习率应停在 min_lr，而不是继续变化或降到 0。",
                            f"step {step} is past total_steps: the rate stays at min_lr, neither moving on nor going to 0.")
    after = [lr for step, lr in zip(steps, lrs) if step >= warmup_steps]
    if any(b > a + TOLERANCE["atol"] * abs(max_lr) for a, b in zip(after, after[1:])):
        return _problem("warmup 之后学习率应单调不增（余弦从 max_lr 降到 min_lr）。",
                        "after warmup the rate never rises (a cosine from max_lr down to min_lr).")
    return None


def judge_step_floats(loss, grad_norm):
    if not (isinstance(loss, float) and isinstance(grad_norm, float)):
        return _problem(f"train_step 应返回两个 Python float（loss.item() 那样），实际是 {type(loss).__name__}、"
                        f"{type(grad_norm).__name__}。",
                        f"train_step returns two Python floats (as loss.item() gives), got {type(loss).__name__} and "
                        f"{type(grad_norm).__name__}.")
    return None


def judge_returned_floats(python_floats, function):
    if not python_floats:
        return _problem(f"{function} 应返回 Python 的 float（用 .item() 取出张量里的数），而不是张量。",
                        f"{function} returns Python floats (take the number out of a tensor with .item()), not tensors.")
    return None


def judge_nonfinite_stop(raised, parameters_unchanged):
    if raised != "raised FloatingPointError":
        return _problem(f"损失不是有限数时应抛出 FloatingPointError（你的代码：{raised}）；否则 nan 会经反向传播写进每个参数。",
                        f"a non-finite loss must raise FloatingPointError (your code: {raised}); otherwise backward "
                        "writes nan into every parameter.")
    if not parameters_unchanged:
        return _problem("抛出 FloatingPointError 之前参数已经变了：检查要在 backward 和 step 之前。",
                        "the parameters changed before FloatingPointError was raised: check before backward and step.")
    return None


def judge_mode_restored(before, after):
    if before != after:
        return _problem(f"调用前模型处于 {'训练' if before else '评估'} 模式，调用后变成了 {'训练' if after else '评估'} 模式："
                        "要恢复调用前的模式（记下 model.training，最后 model.train(那个值)）。",
                        f"the model was in {'training' if before else 'eval'} mode before the call and in "
                        f"{'training' if after else 'eval'} mode after it: restore the mode it had (save model.training, "
                        "then model.train(saved)).")
    return None


def judge_eval_calls(every_call_in_eval_without_grad):
    if not every_call_in_eval_without_grad:
        return _problem("模型应在评估模式（model.eval()）和 torch.no_grad() 之下被调用：否则 dropout 还开着，还会白建计算图。",
                        "the model must be called in eval mode (model.eval()) under torch.no_grad(): otherwise dropout is "
                        "still on and a graph is built for nothing.")
    return None


def judge_probabilities(probs):
    problem = _tensor_problem(probs, "概率")
    if problem:
        return problem
    sums = probs.double().sum(dim=-1)
    if (probs < 0).any() or not torch.allclose(sums, torch.ones_like(sums), **TOLERANCE):
        return _problem("每一行（最后一根轴）应是非负、和为 1 的概率。", "every row (the last axis) must be non-negative and sum to 1.")
    return None


def judge_top_k(logits, top_k, probs):
    """Entries below the k-th largest logit get probability exactly 0; the others, ties included, keep some."""
    k = min(top_k, logits.shape[-1])
    threshold = logits.topk(k, dim=-1).values[..., -1:]
    kept = logits >= threshold
    if (probs[~kept] != 0).any():
        return _problem(f"top_k={top_k} 时，比第 {top_k} 大的值还小的词元概率应恰好为 0（把它们的 logit 设为 -inf，而不是 0）。",
                        f"with top_k={top_k} every entry below the {top_k}-th largest value gets probability exactly 0 "
                        "(set its logit to -inf, not 0).")
    if (probs[kept] <= 0).any():
        return _problem(f"与第 {top_k} 大的值相等的词元也要保留（并列时保留的可能多于 k 个）。",
                        f"entries equal to the {top_k}-th largest value are kept too (ties can keep more than k).")
    return None


def judge_one_hot(logits, probs):
    expected = torch.nn.functional.one_hot(logits.argmax(dim=-1), logits.shape[-1]).to(probs.dtype)
    if probs.shape != expected.shape or not torch.equal(probs, expected):
        return _problem("temperature = 0 时应返回 argmax 处为 1 的 one-hot（并列时取 torch.argmax 选的那个），而不是除以 0。",
                        "temperature 0 gives a one-hot at the argmax (torch.argmax's choice among ties), not a division "
                        "by zero.")
    return None


def judge_generated(prompt, out, new):
    problem = _tensor_problem(out, "生成结果")
    if problem:
        return problem
    expected = (prompt.shape[0], prompt.shape[1] + new)
    if tuple(out.shape) != expected or out.dtype != torch.int64:
        return _problem(f"generate 的输出形状是 {tuple(out.shape)}、dtype {out.dtype}；应是 [B, T0 + max_new_tokens] 的 int64。",
                        f"generate returned shape {tuple(out.shape)}, dtype {out.dtype}; expected [B, T0 + max_new_tokens], "
                        "int64.")
    if not torch.equal(out[:, : prompt.shape[1]].cpu(), prompt.cpu()):
        return _problem("输出的开头应原样保留提示（prompt）。", "the output starts with the prompt, unchanged.")
    return None


def judge_cache_agrees(cached, uncached):
    if not (isinstance(cached, torch.Tensor) and isinstance(uncached, torch.Tensor)
            and cached.shape == uncached.shape and torch.equal(cached, uncached)):
        return _problem("带 KV 缓存和不带缓存生成的词元应逐个相同：缓存只省计算，不改结果。"
                        "检查第一次调用是否传了 use_cache=True，以后每次是否只喂最新的一个词元并传入 past_key_values。",
                        "generation with and without the KV cache must agree token for token: the cache saves work, it "
                        "changes nothing. Check that the first call passes use_cache=True and each later call feeds only "
                        "the newest token with past_key_values.")
    return None


# --- checks you run in the notebook ---------------------------------------------------------


def _train():
    from hero_transformer import train

    return train


def _model():
    from hero_transformer import model

    return model


def _tiny_lm(seed=0, block_size=24):
    model = _model()
    cfg = model.Config(vocab_size=11, block_size=block_size, d_model=8, n_heads=2, n_layers=2, d_ff=16, dropout=0.0)
    return model.init_weights(model.TransformerLM(cfg), generator=torch.Generator().manual_seed(seed))


def _linear_weight_names(net):
    return {f"{name}.weight" if name else "weight" for name, module in net.named_modules()
            if isinstance(module, torch.nn.Linear)}


def group_summary(groups, net):
    """What judge_groups reads, from parameter_groups' result."""
    names = {id(p): n for n, p in net.named_parameters()}
    summary = {"count": len(groups)}
    for label, group in zip(("decay", "no_decay"), groups):
        summary[label] = list(group.get("names", []))
        summary[label + "_params"] = [names.get(id(p), "?") for p in group.get("params", [])]
        summary[label + "_weight_decay"] = group.get("weight_decay", "missing")
    return summary


@visible_check("get_batch", module=MODULE, target="get_batch")
def check_get_batch():
    train = _train()
    data = torch.arange(100, 131)
    x, y = train.get_batch(data, 6, 4, torch.Generator().manual_seed(1))
    _raise_if(judge_batch(data, 6, 4, x, y))
    again, _ = train.get_batch(data, 6, 4, torch.Generator().manual_seed(1))
    if not torch.equal(x, again):
        raise AssertionError("同一个种子的生成器应给出同一批：起点要用传入的 generator 抽取。"
                             "\n(the same seeded generator must give the same batch: draw the starts with it)")
    _passed("get_batch：形状 [B,T]、int64，y 是 x 右移一位，窗口不越界，同一种子给出同一批")


@visible_check("parameter_groups", module=MODULE, target="parameter_groups")
def check_parameter_groups():
    train = _train()
    net = _tiny_lm()
    trainable = [n for n, p in net.named_parameters() if p.requires_grad]
    summary = group_summary(train.parameter_groups(net, 0.1), net)
    _raise_if(judge_groups(summary, trainable, _linear_weight_names(net), 0.1))
    _passed("parameter_groups：只有线性层的权重矩阵衰减，嵌入表、偏置和 LayerNorm 不衰减，顺序与 named_parameters 一致")


@visible_check("lr_at", module=MODULE, target="lr_at")
def check_lr_at():
    train = _train()
    settings = dict(max_lr=1e-3, min_lr=1e-4, warmup_steps=10, total_steps=50)
    steps = list(range(61))
    lrs = [train.lr_at(step, **settings) for step in steps]
    _raise_if(judge_schedule(steps, lrs, **settings))
    for bad in (dict(step=-1, **settings), dict(step=0, max_lr=1e-3, min_lr=1e-4, warmup_steps=60, total_steps=50)):
        try:
            train.lr_at(bad.pop("step"), **bad)
        except ValueError:
            continue
        raise AssertionError("负的步数，或 warmup_steps 大于 total_steps，应抛出 ValueError。"
                             "\n(a negative step, or warmup_steps > total_steps, raises ValueError)")
    _passed("lr_at：线性 warmup 到 max_lr，随后单调下降，total_steps 之后停在 min_lr，坏参数抛 ValueError")


@visible_check("train_step", module=MODULE, target="train_step")
def check_train_step():
    train = _train()
    net = _tiny_lm()
    optimizer = torch.optim.AdamW(net.parameters(), lr=1.0, betas=(0.9, 0.95))
    ids = torch.randint(0, 11, (3, 9), generator=torch.Generator().manual_seed(2))
    before = [p.detach().clone() for p in net.parameters()]
    loss, grad_norm = train.train_step(net, optimizer, ids[:, :-1], ids[:, 1:], 1e-3, 1.0)
    _raise_if(judge_step_floats(loss, grad_norm))
    if not (math.isfinite(loss) and abs(loss - math.log(11)) < 0.5 and grad_norm > 0):
        raise AssertionError(f"初始化后的损失应接近 ln V = ln 11，梯度范数应为正；实际 loss={loss}, grad_norm={grad_norm}。"
                             f"\n(right after init the loss is close to ln 11 and the gradient norm positive)")
    if any(group["lr"] != 1e-3 for group in optimizer.param_groups):
        raise AssertionError("每个参数组的 \"lr\" 都应设为传入的 lr。\n(set \"lr\" of every param group to the lr passed in)")
    if all(torch.equal(a, b.detach()) for a, b in zip(before, net.parameters())):
        raise AssertionError("optimizer.step() 之后参数应该变了。\n(the parameters should change after optimizer.step())")
    with torch.no_grad():
        net.head.weight[0, 0] = float("nan")  # a broken model: every loss is nan from now on
    frozen = [p.detach().clone() for p in net.parameters()]
    try:
        train.train_step(net, optimizer, ids[:, :-1], ids[:, 1:], 1e-3, 1.0)
        raised = "no error"
    except FloatingPointError:
        raised = "raised FloatingPointError"
    same = all(torch.equal(a.nan_to_num(), b.detach().nan_to_num()) for a, b in zip(frozen, net.parameters()))
    _raise_if(judge_nonfinite_stop(raised, same))
    _passed("train_step：返回两个 float，损失约为 ln V，参数被更新；损失为 nan 时抛 FloatingPointError 且参数不变")


@visible_check("evaluate", module=MODULE, target="evaluate")
def check_evaluate():
    train = _train()
    net = _tiny_lm()
    data = torch.randint(0, 11, (40,), generator=torch.Generator().manual_seed(3))
    for mode in (True, False):
        net.train(mode)
        value = train.evaluate(net, data, 6, 4)
        _raise_if(judge_mode_restored(mode, net.training))
    windows = (len(data) - 1) // 6
    with torch.no_grad():
        x = data[: windows * 6].view(windows, 6)
        y = data[1 : windows * 6 + 1].view(windows, 6)
        direct = net.eval()(x, y).loss.item()
    if not isinstance(value, float) or abs(value - direct) > 1e-5 + 1e-4 * abs(direct):
        raise AssertionError(f"evaluate 给出 {value}，与把 {windows} 个不重叠窗口一次算完的每词元平均交叉熵不一致。"
                             f"\n(evaluate gave {value}, which is not the per-token mean over the {windows} "
                             "non-overlapping windows)")
    _passed("evaluate：不重叠窗口上的每词元平均交叉熵，训练/评估模式原样恢复")


@visible_check("next_token_probs", module=MODULE, target="next_token_probs")
def check_next_token_probs():
    train = _train()
    logits = torch.tensor([[1.0, 2.0, 3.0, 0.5, -1.0, 2.0], [0.0, 4.0, -2.0, 4.0, 1.0, 3.5]])
    for temperature, top_k in ((1.0, None), (0.6, None), (1.7, 3), (1.0, 1)):
        probs = train.next_token_probs(logits, temperature, top_k)
        _raise_if(judge_probabilities(probs))
        if top_k is not None:
            _raise_if(judge_top_k(logits, top_k, probs))
    _raise_if(judge_one_hot(logits, train.next_token_probs(logits, 0.0)))
    sharp, flat = train.next_token_probs(logits, 0.5), train.next_token_probs(logits, 2.0)
    if not (sharp.max(dim=-1).values > flat.max(dim=-1).values).all():
        raise AssertionError("温度越低，分布应越尖（最大概率越大）：是 logits 除以温度，不是乘。"
                             "\n(a lower temperature sharpens the distribution: divide the logits by it)")
    for bad in (dict(temperature=-1.0), dict(top_k=0)):
        try:
            train.next_token_probs(logits, **bad)
        except ValueError:
            continue
        raise AssertionError("负温度或 top_k < 1 应抛出 ValueError。\n(a negative temperature or top_k < 1 raises ValueError)")
    _passed("next_token_probs：每行和为 1，top-k 之外恰为 0（并列保留），温度 0 给出 one-hot，坏参数抛 ValueError")


# --- the generate check's doubles: next_token_probs, and a record of the model's calls --------


class Sampler:
    """next_token_probs' double, called by generate by that name: `pick(logits)` gives [B, V]
    probabilities (not the exercise's), and every call's temperature and top_k are recorded."""

    def __init__(self, pick):
        self.pick, self.calls = pick, []

    def __call__(self, logits, temperature=1.0, top_k=None):
        self.calls.append((temperature, top_k))
        return self.pick(logits)


def least_likely(logits):
    """All the probability on the smallest logit: generate's draws are then known in advance."""
    return torch.nn.functional.one_hot(logits.argmin(dim=-1), logits.shape[-1]).to(logits.dtype)


def reversed_softmax(logits):
    """A distribution that prefers small logits: exp(-logits), normalised."""
    weights = torch.exp(logits.amin(dim=-1, keepdim=True) - logits)
    return weights / weights.sum(dim=-1, keepdim=True)


def recorded_calls(net):
    """Record every forward of `net`: (tokens fed, whether a cache came with them, training mode, grad enabled)."""
    calls = []

    def record(module, args, kwargs):
        idx = args[0] if args else kwargs["idx"]
        past = args[2] if len(args) > 2 else kwargs.get("past_key_values")
        calls.append((idx.shape[1], past is not None, module.training, torch.is_grad_enabled()))

    return calls, net.register_forward_pre_hook(record, with_kwargs=True)


def judge_model_calls(calls, prompt_length, new, use_cache):
    """use_cache: the whole prompt once, then each newest token with the cache; without: the whole
    sequence so far, each time, without a cache."""
    fed = [(length, cached) for length, cached, *_ in calls]
    if use_cache:
        expected = [(prompt_length, False)] + [(1, True)] * (new - 1)
        how_zh, how_en = "第一次送入整个提示，之后每次只送最新的一个词元并带上 past_key_values", \
            "the whole prompt first, then only the newest token each time, with past_key_values"
    else:
        expected = [(prompt_length + i, False) for i in range(new)]
        how_zh, how_en = "每次送入到目前为止的整个序列、不带缓存", "the whole sequence so far each time, without a cache"
    if fed != expected:
        return _problem(f"use_cache={use_cache} 时生成 {new} 个词元，模型的调用应是：{how_zh}。你的 generate 送入的"
                        f"（词元数, 是否带缓存）依次是 {fed[:6]}{' …' if len(fed) > 6 else ''}。",
                        f"with use_cache={use_cache}, generating {new} tokens calls the model with {how_en}; your "
                        f"generate fed (tokens, with a cache) {fed[:6]}{' ...' if len(fed) > 6 else ''}.")
    return None


def judge_drawn_from_sampler(out, logits, prompt_length):
    """With a sampler that puts all the probability on one token, each new token is that one, for
    the logits of the position before it."""
    wanted = logits[:, prompt_length - 1:-1].argmin(dim=-1)
    if not torch.equal(out[:, prompt_length:], wanted):
        return _problem("把 next_token_probs 换成一个把全部概率放在最小 logit 上的替身后，每个新词元都应是它给的那个："
                        "用最后一个位置的 logits 调用 next_token_probs（按这个名字），再用 torch.multinomial 从它的结果里抽。",
                        "with next_token_probs replaced by a double that puts all the probability on the smallest "
                        "logit, each new token must be that one: call next_token_probs (by that name) on the last "
                        "position's logits and draw from its result with torch.multinomial.")
    return None


def judge_sampler_arguments(calls, temperature, top_k, new):
    if len(calls) != new or any(call != (temperature, top_k) for call in calls):
        return _problem(f"temperature={temperature}、top_k={top_k} 生成 {new} 个词元时，next_token_probs 应被调用 {new} 次，"
                        f"每次都带上这两个参数；你的 generate 调用了 {len(calls)} 次，参数为 {calls[:3]}。",
                        f"generating {new} tokens with temperature={temperature}, top_k={top_k} calls next_token_probs "
                        f"{new} times, each with both; your generate called it {len(calls)} times with {calls[:3]}.")
    return None


@visible_check("generate", module=MODULE, target="generate")
def check_generate():
    train = _train()
    net = _tiny_lm(block_size=24)
    prompt = torch.tensor([[1, 2, 3], [4, 4, 0]])
    for use_cache in (True, False):
        net.train()
        calls, hook = recorded_calls(net)
        try:
            out = train.generate(net, prompt, 6, temperature=0.0, use_cache=use_cache)
        finally:
            hook.remove()
        _raise_if(judge_mode_restored(True, net.training))
        _raise_if(judge_generated(prompt, out, 6))
        _raise_if(judge_eval_calls(bool(calls) and all(not training and not grad for *_, training, grad in calls)))
        _raise_if(judge_model_calls(calls, 3, 6, use_cache))
    cached = train.generate(net, prompt, 15, temperature=0.0, use_cache=True)
    _raise_if(judge_cache_agrees(cached, train.generate(net, prompt, 15, temperature=0.0, use_cache=False)))
    sampler = Sampler(least_likely)
    with standing_in(train, next_token_probs=sampler):
        out = train.generate(net, prompt, 8, temperature=1.3, top_k=4, use_cache=True)
        with torch.no_grad():
            _raise_if(judge_drawn_from_sampler(out, net.eval()(out).logits, 3))
        _raise_if(judge_sampler_arguments(sampler.calls, 1.3, 4, 8))
    with standing_in(train, next_token_probs=Sampler(reversed_softmax)):
        sampled = [train.generate(net, prompt, 12, temperature=1.2, top_k=4, use_cache=flag,
                                  generator=torch.Generator().manual_seed(5)) for flag in (True, False)]
    _raise_if(judge_cache_agrees(*sampled))
    _raise_if(judge_generated(prompt, train.generate(net, prompt, 21, temperature=0.0), 21))  # 3 + 21 = block_size
    try:
        train.generate(net, prompt, 22, temperature=0.0)
        raise AssertionError("提示 3 个词元加 22 个新词元超过了 block_size = 24，应抛出 ValueError。"
                             "\n(3 + 22 tokens exceed block_size 24: raise ValueError)")
    except ValueError:
        pass
    _passed("generate：形状 [B, T0+n]、保留提示，评估模式且不建计算图，带缓存时只喂最新词元；带缓存与不带缓存逐词元相同"
            "（贪心与同种子采样），从 next_token_probs 的结果里抽样（它用的是替身），恰到 block_size 可以、超过抛 ValueError")

"""Visible checks of chapter 7 (the whole model): properties you can test on your own code.

As in checks.py, each ``judge_*`` function looks at outputs only and returns ``None`` when the
property holds, or a ``(中文, English)`` pair that says what is wrong; the ``check_*``
functions run your code on small inputs and raise ``AssertionError`` with the Chinese message.
The autograder applies the same judges to the outputs of your code in its own process.
"""

import math

import torch
import torch.nn.functional as F
from torch import nn

from .checks import TOLERANCE, _passed, _raise_if, judge_causal, show_tracebacks, visible_check  # noqa: F401

MODEL, AUDIT = "model", "audit"


def _close(a, b):
    return isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.shape == b.shape and \
        torch.allclose(a.double(), b.double(), **TOLERANCE)


# --- judges: the forward ------------------------------------------------------------------


def judge_logits_shape(idx, logits, vocab_size):
    """[B, T] ids give [B, T, V] logits: one score per vocabulary entry at every position."""
    if not isinstance(logits, torch.Tensor):
        return (f"logits 应为张量，实际是 {type(logits).__name__}。", f"logits must be a tensor, got {type(logits).__name__}.")
    expected = tuple(idx.shape) + (vocab_size,)
    if tuple(logits.shape) != expected:
        return (f"logits 形状 {tuple(logits.shape)} 不对：输入 {tuple(idx.shape)} 时应为 [B, T, V]，每个位置对整张词表各给一个分数。",
                f"the logits' shape {tuple(logits.shape)} is wrong: for input {tuple(idx.shape)} it is [B, T, V], "
                "one score per vocabulary entry at every position.")
    return None


def judge_loss(logits, targets, loss):
    """With targets, the loss is the mean cross entropy of these logits over all B*T positions;
    without, it is None."""
    if targets is None:
        if loss is not None:
            return ("没有给 targets 时 loss 应为 None。", "without targets the loss must be None.")
        return None
    if not isinstance(loss, torch.Tensor) or loss.dim() != 0:
        return ("给了 targets 时 loss 应是一个标量张量（0 维）。", "with targets the loss must be a scalar (0-dim) tensor.")
    if not isinstance(logits, torch.Tensor) or logits.shape[:-1] != targets.shape:
        return None  # the shape judge speaks
    mean = F.cross_entropy(logits.double().reshape(-1, logits.shape[-1]), targets.reshape(-1))
    if not _close(loss, mean.to(loss.dtype)):
        total = mean * targets.numel()
        hint_zh = "（它等于总和：应对 B·T 个位置取平均，不是求和）" if _close(loss, total.to(loss.dtype)) else ""
        hint_en = " (it equals the sum: average over the B*T positions, do not add them up)" if hint_zh else ""
        return ("loss 与返回的 logits 对不上：它应是 logits 对 targets 的交叉熵在全部 B·T 个位置上的平均" + hint_zh + "。",
                "the loss does not match the returned logits: it is the cross entropy of the logits against the "
                "targets, averaged over all B*T positions" + hint_en + ".")
    return None


def judge_presents(presents, use_cache, n_layers):
    """use_cache: one present per block, in a list; no cache: None."""
    if not use_cache:
        if presents is not None:
            return ("use_cache=False 时输出的 past_key_values 应为 None。", "with use_cache=False past_key_values must be None.")
        return None
    if not isinstance(presents, (list, tuple)) or len(presents) != n_layers:
        got = len(presents) if isinstance(presents, (list, tuple)) else type(presents).__name__
        return (f"use_cache=True 时 past_key_values 应是每个块各一项的列表（{n_layers} 块），实际是 {got}。",
                f"with use_cache=True past_key_values is a list with one present per block ({n_layers} blocks); "
                f"got {got}.")
    return None


def judge_incremental(full, incremental):
    """Decoding with the cache gives the logits of the full forward."""
    if not _close(full, incremental):
        return ("先算前几个位置（use_cache=True），再把其余位置连同缓存送进去，得到的 logits 应与一次算完整段相同。"
                "检查：每个块读的是不是它自己那一项缓存，位置是不是从 past_length 接着编号。",
                "the logits of a forward continued from the cache must equal those of the whole sequence at once. "
                "Check that each block reads its own cache entry and that positions continue from past_length.")
    return None


def judge_raised_value_error(outcome):
    if outcome != "raised ValueError":
        return ("序列越过 block_size 时应抛出 ValueError（add_positions 会抛，不要吞掉，也不要只用 0 起的位置）。",
                "a sequence past block_size must raise ValueError (add_positions raises it: do not swallow it, and "
                "do not number positions from 0 after a cache).")
    return None


def judge_changes(before, after, what_zh, what_en):
    """Changing a part the forward must use changes the logits."""
    if _close(before, after):
        return (f"改变{what_zh}之后 logits 没有变：forward 没有用到它。", f"changing {what_en} left the logits unchanged: "
                "the forward does not use it.")
    return None


# --- judges: init_weights -------------------------------------------------------------------


def _is_layer_norm(name):
    return name.rpartition(".")[0].rpartition(".")[2].startswith("ln_")


def judge_init_fixed(named):
    """LayerNorm weights one; every bias zero."""
    for name, value in named:
        if _is_layer_norm(name) and name.endswith(".weight") and not torch.equal(value, torch.ones_like(value)):
            return (f"{name} 应被置为全 1（LayerNorm 的 gamma）。注意本课程的 LayerNorm 是 model.LayerNorm，不是 nn.LayerNorm。",
                    f"{name} must be set to ones (LayerNorm's gamma). The course's LayerNorm is model.LayerNorm, not "
                    "nn.LayerNorm.")
        if name.endswith(".bias") and not torch.equal(value, torch.zeros_like(value)):
            return (f"{name} 应被置为全 0（偏置与 LayerNorm 的 beta 都从 0 开始）。",
                    f"{name} must be set to zeros (biases and LayerNorm's beta start at 0).")
    return None


def expected_init_std(name, n_layers, std=0.02):
    if name.endswith(("attention.proj.weight", "feedforward.fc2.weight")):
        return std / math.sqrt(2 * n_layers)
    return std


def judge_init_std(named, n_layers, smallest=256, tolerance=0.2):
    """Drawn matrices of at least `smallest` numbers have a sample std within `tolerance` of
    0.02, or of 0.02/sqrt(2N) for the two residual writers."""
    for name, value in named:
        if name.endswith(".weight") and not _is_layer_norm(name) and value.numel() >= smallest:
            target = expected_init_std(name, n_layers)
            got = value.double().std().item()
            if abs(got - target) > tolerance * target:
                return (f"{name} 的样本标准差约为 {got:.4f}，与应有的尺度不符：嵌入和线性层的权重用 0.02，"
                        "只有 attention.proj.weight 与 feedforward.fc2.weight 用 0.02/√(2N)。",
                        f"{name} has a sample std of about {got:.4f}, not the scale it should have: embeddings and "
                        "linear weights use 0.02, only attention.proj.weight and feedforward.fc2.weight use "
                        "0.02/sqrt(2N).")
    return None


def judge_same_draws(named, named_again):
    """The same generator state gives the same weights."""
    if len(named) != len(named_again) or any(
            a != b or not torch.equal(x, y) for (a, x), (b, y) in zip(named, named_again)):
        return ("两次用同一个种子的 generator 初始化，得到的权重应完全相同：只从传入的 generator 抽样，"
                "并按 named_parameters() 的顺序逐个抽。",
                "two initialisations with generators seeded alike must give identical weights: draw from the "
                "generator passed in only, in named_parameters() order.")
    return None


def judge_returns_model(returned_is_model):
    if returned_is_model is not True:
        return ("init_weights 应原地修改并返回传入的那个模型对象本身。", "init_weights must work in place and return the model it was given.")
    return None


# --- judges: the three gradient questions and the ledger ---------------------------------------


def judge_names(names, all_names, question_zh, question_en):
    """A list of parameter names, each a real one, in named_parameters() order, none twice."""
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        return (f"{question_zh}应返回参数名（字符串）的列表。", f"{question_en} must return a list of parameter names (strings).")
    unknown = [n for n in names if n not in all_names]
    if unknown:
        return (f"{question_zh}返回了模型里没有的名字 {unknown[:3]}：用 named_parameters() 给出的名字。",
                f"{question_en} returned names the model does not have, {unknown[:3]}: use the names "
                "named_parameters() gives.")
    if [n for n in all_names if n in names] != names:
        return (f"{question_zh}的名字应按 named_parameters() 的顺序排列、不重复。",
                f"{question_en} must list names in named_parameters() order, each once.")
    return None


def judge_flags_nothing(names, setup_zh, setup_en, question_zh, question_en):
    """A setup without this question's problem: the list is empty."""
    if names != []:
        return (f"{setup_zh}里没有{question_zh}要找的问题，应返回 []，你的函数却标出了 {names[:3]}：三个问题各查各的，"
                "一个参数只在它自己的问题里出现。",
                f"{setup_en} has none of the problems {question_en} looks for, so it must return [], yet yours "
                f"flags {names[:3]}: each of the three questions finds its own problem only.")
    return None


def judge_flags(names, expected, question_zh, question_en):
    """The check's own setup, whose answer the check knows (it is not a hidden case)."""
    if names != expected:
        return (f"{question_zh}：在检查自己搭的这个例子里应返回 {expected}，你的函数返回 {names}。",
                f"{question_en}: on the check's own example it must return {expected}; yours returns {names}.")
    return None


def judge_gap(gap, expected, situation_zh, situation_en):
    if not isinstance(gap, int) or isinstance(gap, bool):
        return (f"ledger_gap 应返回整数，实际是 {type(gap).__name__}。", f"ledger_gap must return an int, got {type(gap).__name__}.")
    if gap != expected:
        return (f"{situation_zh}时 ledger_gap 应为 {expected}，你的函数给出 {gap}。",
                f"{situation_en}, ledger_gap must be {expected}; yours gives {gap}.")
    return None


# --- checks you run in the notebook -------------------------------------------------------


def _package():
    from hero_transformer import audit, model

    return model, audit


def small_config(model, n_layers=2):
    return model.Config(vocab_size=11, block_size=8, d_model=4, n_heads=2, n_layers=n_layers, d_ff=8, dropout=0.0)


@visible_check("model_forward", module=MODEL, target="TransformerLM.forward")
def check_model_forward():
    model, _ = _package()
    torch.manual_seed(0)
    lm = model.TransformerLM(small_config(model, n_layers=3)).eval()
    idx = torch.randint(0, 11, (2, 5))  # B = 2, T = 5 != d = 4 != V = 11
    targets = torch.randint(0, 11, (2, 5))
    changed = idx.clone()
    changed[:, 3:] = (changed[:, 3:] + 1) % 11
    with torch.no_grad():
        out = lm(idx, targets)
        logits, loss, presents = out
        _raise_if(judge_logits_shape(idx, logits, 11))
        _raise_if(judge_loss(logits, targets, loss))
        _raise_if(judge_presents(presents, False, 3))
        _raise_if(judge_loss(logits, None, lm(idx)[1]))
        _raise_if(judge_causal(logits, lm(changed)[0], 3))
        first = lm(idx[:, :3], use_cache=True)
        _raise_if(judge_presents(first[2], True, 3))
        second = lm(idx[:, 3:], past_key_values=first[2], use_cache=True)
        _raise_if(judge_incremental(logits, torch.cat([first[0], second[0]], dim=1)))
        try:
            lm(torch.zeros(1, 9, dtype=torch.long))
            outcome = "no error"
        except ValueError:
            outcome = "raised ValueError"
        _raise_if(judge_raised_value_error(outcome))
        for part_zh, part_en, parameter in (("最后一个块", "the last block", lm.blocks[-1].feedforward.fc2.bias),
                                            ("第一个块", "the first block", lm.blocks[0].feedforward.fc2.bias),
                                            ("位置表", "the position table", lm.position_embedding.weight)):
            saved = parameter.clone()
            parameter.add_(torch.linspace(-1.0, 1.0, parameter.numel()).reshape(parameter.shape))  # not a constant
            _raise_if(judge_changes(logits, lm(idx)[0], part_zh, part_en))
            parameter.copy_(saved)
        # the caller's cache list is left as it was: the output's list is a new one
        cache = first[2]
        kept = list(cache) if isinstance(cache, list) else cache
        lm(idx[:, 3:4], past_key_values=cache, use_cache=True)
        if isinstance(cache, list) and (len(cache) != len(kept) or any(a is not b for a, b in zip(cache, kept))):
            raise AssertionError("forward 改动了调用者传入的 past_key_values 列表：返回的缓存是一个新列表，传入的那个保持原样。\n"
                                 "(forward changed the past_key_values list the caller passed: the cache it returns is a "
                                 "new list, and the one passed in stays as it was.)")
        # logits hundreds apart: the cross entropy is a finite number of that size (softmax's 0 probability is not)
        saved = lm.head.weight.clone()
        lm.head.weight.mul_(300.0)
        far_logits, far_loss, _ = lm(idx, targets)
        lm.head.weight.copy_(saved)
        _raise_if(judge_loss(far_logits, targets, far_loss))
        lm.ln_f.weight.zero_()  # ln_f's output is then beta = 0, and the bias-free head gives 0
        if not torch.equal(lm(idx)[0], torch.zeros_like(logits)):
            raise AssertionError("把 ln_f 的 gamma、beta 都置 0 后，logits 应全为 0（head 没有偏置）：logits 必须是 "
                                 "head(ln_f(最后一个块的输出))。\n(with ln_f's gamma and beta zero the logits must be 0: "
                                 "logits = head(ln_f(last block's output)).)")
    # the loss is trained: its gradient reaches the tables and the head
    lm = model.TransformerLM(small_config(model, n_layers=3)).eval()
    loss = lm(idx, targets)[1]
    if isinstance(loss, torch.Tensor) and loss.requires_grad:
        loss.backward()
    unreached = [name for name in ("token_embedding.weight", "position_embedding.weight", "head.weight")
                 if lm.get_parameter(name).grad is None]
    if unreached:
        raise AssertionError(f"loss.backward() 之后 {', '.join(unreached)} 没有梯度：损失要留在计算图里（不要 .item() "
                             "之后再建张量，不要 .detach()）。\n"
                             f"(after loss.backward() {', '.join(unreached)} got no gradient: the loss stays in the "
                             "graph (no tensor rebuilt from .item(), no .detach()).)")
    _passed("TransformerLM.forward：logits [2,5,11]、平均交叉熵（logit 相差几百时也有限）、因果、KV cache 与整段一致、"
            "不改传入的缓存、越界报错、每块与 ln_f 都用上、梯度到达各参数")


@visible_check("init_weights", module=MODEL, target="init_weights")
def check_init_weights():
    model, _ = _package()
    cfg = model.Config(vocab_size=64, block_size=32, d_model=32, n_heads=4, n_layers=3, d_ff=64, dropout=0.0)
    lm = model.TransformerLM(cfg)
    held = [id(parameter) for parameter in lm.parameters()]  # what an optimizer built before would hold
    returned = model.init_weights(lm, generator=torch.Generator().manual_seed(0))
    _raise_if(judge_returns_model(returned is lm))
    if [id(parameter) for parameter in lm.parameters()] != held:
        raise AssertionError("init_weights 给模块换上了新的参数对象：要原地填充模型自己的参数（优化器里握着的是原来那些）。\n"
                             "(init_weights gave the modules new parameter objects: fill the model's own parameters in "
                             "place; an optimizer holds the original ones.)")
    named = [(name, p.detach().clone()) for name, p in lm.named_parameters()]
    _raise_if(judge_init_fixed(named))
    _raise_if(judge_init_std(named, cfg.n_layers))
    again = model.init_weights(model.TransformerLM(cfg), generator=torch.Generator().manual_seed(0))
    _raise_if(judge_same_draws(named, [(name, p.detach().clone()) for name, p in again.named_parameters()]))
    _passed("init_weights：返回原模型，LayerNorm 为 1/0、偏置为 0，各矩阵的尺度 0.02 与 0.02/√(2N)，同一种子同一结果")


class _Toy(nn.Module):
    """The checks' own small model: a table, a layer, a spare layer the forward can skip, a head."""

    def __init__(self, use_spare=True, tie=False, layer_scale=1.0):
        super().__init__()
        self.use_spare, self.layer_scale = use_spare, layer_scale
        self.table = nn.Embedding(5, 3)
        self.layer = nn.Linear(3, 3)
        self.spare = nn.Linear(3, 3)
        self.head = nn.Linear(3, 5, bias=False)
        if tie:  # one tensor, two names: named_parameters() gives it once, as table.weight
            self.head.weight = self.table.weight

    def forward(self, ids):
        x = self.table(ids)
        x = x + self.layer(self.layer_scale * x)
        if self.use_spare:
            x = x + self.spare(x)
        return self.head(x)


def _toy_setup(use_spare=True, frozen=(), leave_out=(), zero_input_layer=False, two_groups=False, tie=False,
               layer_scale=1.0):
    torch.manual_seed(0)
    toy = _Toy(use_spare, tie, layer_scale)
    for name, p in toy.named_parameters():
        p.requires_grad_(name not in frozen)
    held = [p for name, p in toy.named_parameters() if p.requires_grad and name not in leave_out]
    groups = [{"params": [p for p in held if p.dim() == 2]}, {"params": [p for p in held if p.dim() < 2],
                                                              "weight_decay": 0.0}] if two_groups else held
    optimizer = torch.optim.SGD(groups, lr=0.1)
    ids = torch.tensor([[0, 1, 2], [3, 0, 1]])  # row 4 of the table is not read: its gradient rows are 0
    if zero_input_layer:
        toy.layer.register_forward_pre_hook(lambda module, args: (torch.zeros_like(args[0]),))
    toy(ids).logsumexp(-1).mean().backward()
    return toy, optimizer


SETUPS = {  # name: (keywords, frozen, unreached, unoptimized)
    "sound": ({}, [], [], []),
    "a frozen table": ({"frozen": ("table.weight",)}, ["table.weight"], [], []),
    "a spare layer the forward skips": ({"use_spare": False}, [], ["spare.weight", "spare.bias"], []),
    "a layer that reads zeros": ({"zero_input_layer": True}, [], ["layer.weight"], []),
    "the head left out of the optimizer": ({"leave_out": ("head.weight",)}, [], [], ["head.weight"]),
    "an optimizer with two param groups": ({"two_groups": True}, [], [], []),
    # registered table first, head last: named_parameters() order, not the alphabet's
    "the table and the head frozen": ({"frozen": ("table.weight", "head.weight")}, ["table.weight", "head.weight"],
                                      [], []),
    "a head tied to the table, frozen": ({"tie": True, "frozen": ("table.weight",)}, ["table.weight"], [], []),
    "a head tied to the table, left out": ({"tie": True, "leave_out": ("table.weight",)}, [], [], ["table.weight"]),
    # a gradient of about 1e-9 is small, not zero: the batch reached the layer
    "a layer that reads its input times 1e-9": ({"layer_scale": 1e-9}, [], [], []),
}


def _check_question(function, position, question_zh, question_en):
    for name, (keywords, *answers) in SETUPS.items():
        toy, optimizer = _toy_setup(**keywords)
        before = [(p.requires_grad, None if p.grad is None else p.grad.clone()) for p in toy.parameters()]
        groups = [[id(p) for p in group["params"]] for group in optimizer.param_groups]
        names = function(toy) if position < 2 else function(toy, optimizer)
        after = [(p.requires_grad, p.grad) for p in toy.parameters()]
        if any(flag != now_flag or (grad is None) != (now is None) or (grad is not None and not torch.equal(grad, now))
               for (flag, grad), (now_flag, now) in zip(before, after)) or groups != [
                [id(p) for p in group["params"]] for group in optimizer.param_groups]:
            raise AssertionError(f"{question_zh} 改动了模型（{name}）：调用之后，梯度、requires_grad 或优化器的参数组与调用前"
                                 "不同。三个问题只读模型和优化器，不调用 zero_grad()。\n"
                                 f"({question_en} changed the model ({name}): after the call a gradient, requires_grad "
                                 "or the optimizer's param groups were not as before. The three questions only read the "
                                 "model and the optimizer; no zero_grad().)")
        _raise_if(judge_names(names, [n for n, _ in toy.named_parameters()], question_zh, question_en))
        _raise_if(judge_flags(names, answers[position], f"{question_zh}（{name}）", f"{question_en} ({name})"))


@visible_check("frozen_parameters", module=AUDIT, target="frozen_parameters")
def check_frozen_parameters():
    _, audit = _package()
    _check_question(audit.frozen_parameters, 0, "frozen_parameters", "frozen_parameters")
    _passed("frozen_parameters：十个小例子里只标出 requires_grad=False 的参数，按 named_parameters() 的顺序，每个一次")


@visible_check("unreached_parameters", module=AUDIT, target="unreached_parameters")
def check_unreached_parameters():
    _, audit = _package()
    _check_question(audit.unreached_parameters, 1, "unreached_parameters", "unreached_parameters")
    _passed("unreached_parameters：只标出这一批梯度为 None 或全零的可训练参数")


@visible_check("unoptimized_parameters", module=AUDIT, target="unoptimized_parameters")
def check_unoptimized_parameters():
    _, audit = _package()
    _check_question(audit.unoptimized_parameters, 2, "unoptimized_parameters", "unoptimized_parameters")
    toy, _ = _toy_setup()
    twin = torch.optim.SGD([toy.table.weight.detach().clone().requires_grad_(True), toy.layer.weight, toy.layer.bias,
                            toy.spare.weight, toy.spare.bias, toy.head.weight], lr=0.1)  # a copy of the table, not it
    _raise_if(judge_flags(audit.unoptimized_parameters(toy, twin), ["table.weight"],
                          "unoptimized_parameters（优化器持有的是嵌入表的一个副本）",
                          "unoptimized_parameters (the optimizer holds a copy of the table)"))
    _passed("unoptimized_parameters：按对象身份比较，只标出优化器没有持有的可训练参数")


@visible_check("ledger_gap", module=AUDIT, target="ledger_gap")
def check_ledger_gap():
    model, audit = _package()
    cfg = small_config(model, n_layers=3)
    torch.manual_seed(0)
    lm = model.TransformerLM(cfg)
    _raise_if(judge_gap(audit.ledger_gap(lm), 0, "模型完好", "for a sound model"))
    per_block = sum(p.numel() for p in lm.blocks[0].parameters())
    lm.blocks = nn.ModuleList([lm.blocks[0]] * cfg.n_layers)  # one block object, used three times
    _raise_if(judge_gap(audit.ledger_gap(lm), (cfg.n_layers - 1) * per_block, "同一个块对象用了三次",
                        "with one block object used three times"))
    lm.token_embedding.weight.requires_grad_(False)  # frozen parameters are registered parameters too
    _raise_if(judge_gap(audit.ledger_gap(lm), (cfg.n_layers - 1) * per_block, "再冻结词嵌入表",
                        "with the token table frozen as well"))
    lm.extra = nn.Linear(4, 2)
    _raise_if(judge_gap(audit.ledger_gap(lm), (cfg.n_layers - 1) * per_block - 10, "再多注册一个 Linear(4, 2)",
                        "with a Linear(4, 2) registered as well"))
    _passed("ledger_gap：完好为 0，复用块对象得 (N-1)·每块参数，多注册的参数使差为负")

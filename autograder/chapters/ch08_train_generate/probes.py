"""What each chapter-8 exercise is asked to compute: cases, test doubles, probes.

Every exercise is graded alone.  What an exercise needs besides itself is a test double built
here from torch primitives: a bigram language model whose loss can be poisoned with nan or inf
(`BigramLM`, for train_step and evaluate, and with an extra term in training mode, so a forgotten
model.eval() shows), a model that mirrors TransformerLM's parameter names (`NamedLikeLM`, for
parameter_groups), a causal prefix-mean model with a cache of its own that logs every call
(`PrefixMeanLM`, for generate), and in generate's place of next_token_probs a different
distribution (`_reversed_probs`: the softmax of the negated logits), so generate is judged on
how it calls the sampler, never on the student's sampler.

Floats a student returns (a learning rate, a loss, a norm) come back as a float64 tensor, so
they are compared with the course's tolerance, plus a flag that says they were Python floats.
A case where a correct body must raise returns "raised <type>"; NotImplementedError propagates.

This file imports only torch, the standard library and the grader's own probes module (on_meta):
the worker loads it inside the sandbox next to student code.
"""

import math
from typing import NamedTuple, Optional

import torch
import torch.nn.functional as F
from torch import nn

try:  # in the grader, a module of the autograder package
    from autograder.probes import on_meta
except ImportError:  # in the worker, the grader's probes module next to it
    from probes import on_meta

VOCAB = 5  # the doubles' vocabulary: B = 2 rows, T = 3 or 4 positions, so no two axes agree


class Output(NamedTuple):
    logits: torch.Tensor
    loss: Optional[torch.Tensor]
    past_key_values: Optional[list]


class Settings(NamedTuple):
    block_size: int


def make_cases(exercise_id):
    """Inputs for one exercise, identical on every run (fixed generator)."""
    gen = torch.Generator().manual_seed(20260808)

    def randn(*shape):
        return torch.randn(*shape, generator=gen)

    if exercise_id == "get_batch":
        stream = torch.randint(0, 50, (23,), generator=gen)
        return {
            "seeded": {"data": stream, "block_size": 4, "batch_size": 3, "seed": 11},
            "long_rows": {"data": stream, "block_size": 7, "batch_size": 2, "seed": 5},
            "last_window": {"data": torch.arange(100, 106), "block_size": 5, "batch_size": 4, "seed": 3},
            "global_rng": {"data": torch.arange(40, 70), "block_size": 3, "batch_size": 5, "seed": None},
            "one_row": {"data": stream, "block_size": 5, "batch_size": 1, "seed": 7},  # nothing to stack
            # data on the meta device: the batch is built where the data lives (one built on the CPU shows)
            "meta_device": {"data": stream, "block_size": 4, "batch_size": 3, "seed": 11, "meta": True},
        }
    if exercise_id == "parameter_groups":
        return {
            "model_like": {"weight_decay": 0.1, "odd": False},
            "odd_parameters": {"weight_decay": 0.05, "odd": True},
            # two nn.Linear sharing one weight: a weight matrix, decayed, listed once (named_parameters() names
            # it once); whether a weight tied to an embedding table decays, the text does not say, so not asked
            "shared_linear_weight": {"weight_decay": 0.1, "odd": False, "shared": True},
        }
    if exercise_id == "lr_at":
        chapter = dict(max_lr=3e-3, min_lr=3e-4, warmup_steps=100, total_steps=600)
        return {
            "chapter": {**chapter, "steps": [0, 1, 49, 98, 99, 100, 101, 250, 350, 475, 599, 600, 601, 900]},
            "no_warmup": {"max_lr": 1.0, "min_lr": 0.1, "warmup_steps": 0, "total_steps": 8, "steps": list(range(11))},
            "all_warmup": {"max_lr": 2.0, "min_lr": 0.5, "warmup_steps": 4, "total_steps": 4, "steps": list(range(7))},
            "short_decay": {"max_lr": 1.0, "min_lr": 0.0, "warmup_steps": 3, "total_steps": 5, "steps": list(range(8))},
            "negative_step": {**chapter, "steps": [-1]},
            "warmup_too_long": {"max_lr": 1.0, "min_lr": 0.1, "warmup_steps": 9, "total_steps": 8, "steps": [0]},
        }
    if exercise_id == "train_step":
        table, bias = randn(VOCAB, VOCAB), 0.5 * randn(VOCAB)
        inputs = torch.randint(0, VOCAB, (2, 3), generator=gen)
        targets = torch.randint(0, VOCAB, (2, 3), generator=gen)
        previous = torch.randint(0, VOCAB, (2, 3), generator=gen)
        base = {"table": table, "bias": bias, "inputs": inputs, "targets": targets, "previous": previous,
                "lr": 0.2, "poison": 0.0}
        return {
            "clipped": {**base, "max_grad_norm": 0.1},
            "unclipped": {**base, "max_grad_norm": 1000.0, "lr": 0.05},
            "default_clip": {**base, "max_grad_norm": None},
            "nan_loss": {**base, "max_grad_norm": 1.0, "poison": math.nan},
            "inf_loss": {**base, "max_grad_norm": 1.0, "poison": math.inf},
            # another batch: another loss and norm (a result kept from an earlier call shows)
            "other_batch": {**base, "max_grad_norm": 1.0, "inputs": torch.randint(0, VOCAB, (2, 3), generator=gen),
                            "targets": torch.randint(0, VOCAB, (2, 3), generator=gen)},
        }
    if exercise_id == "evaluate":
        table, bias = randn(VOCAB, VOCAB), 0.5 * randn(VOCAB)
        stream = torch.randint(0, VOCAB, (16,), generator=gen)
        return {
            # 15 // 3 = 5 windows in batches of 2, 2, 1: the last batch is smaller
            "partial_batch": {"table": table, "bias": bias, "data": stream, "block_size": 3, "batch_size": 2,
                              "training": True},
            # 11 // 4 = 2 windows: a third window would lack its last target
            "no_spare_target": {"table": table, "bias": bias, "data": stream[:12], "block_size": 4, "batch_size": 8,
                                "training": True},
            "started_in_eval": {"table": table, "bias": bias, "data": stream, "block_size": 5, "batch_size": 2,
                                "training": False},
            # (7 - 1) // 5 = 1: the smallest data evaluate accepts, one window in a batch of its own
            "one_window": {"table": table, "bias": bias, "data": stream[:7], "block_size": 5, "batch_size": 1,
                           "training": True},
        }
    if exercise_id == "next_token_probs":
        logits = randn(2, VOCAB)
        tied = torch.tensor([[2.0, 1.0, 1.0, 0.0, -1.0], [0.5, 3.0, 3.0, -2.0, 3.0]])
        return {
            "plain": {"logits": logits, "temperature": 1.0, "top_k": None},
            # float32 exp(90) is inf and exp(-200) is 0: only a softmax that subtracts the maximum stays finite
            "large": {"logits": torch.tensor([[90.0, 0.0, -5.0, 10.0, 89.0], [-200.0, -180.0, -190.0, -210.0, -185.0]]),
                      "temperature": 1.0, "top_k": None},
            "cool": {"logits": logits, "temperature": 0.7, "top_k": None},
            "hot": {"logits": logits, "temperature": 2.5, "top_k": None},
            "top_k": {"logits": logits, "temperature": 0.8, "top_k": 2},
            "ties_kept": {"logits": tied, "temperature": 1.0, "top_k": 2},
            "top_one": {"logits": tied, "temperature": 0.5, "top_k": 1},
            "k_above_vocab": {"logits": logits, "temperature": 1.3, "top_k": VOCAB + 3},
            "greedy_ties": {"logits": tied, "temperature": 0.0, "top_k": None},
            "greedy_topk": {"logits": logits, "temperature": 0.0, "top_k": 3},
            "float64": {"logits": logits.double(), "temperature": 0.9, "top_k": 3},
            "negative_temperature": {"logits": logits, "temperature": -0.5, "top_k": None},
            "zero_k": {"logits": logits, "temperature": 1.0, "top_k": 0},
            # the rules hold at every temperature, greedy included
            "greedy_zero_k": {"logits": logits, "temperature": 0.0, "top_k": 0},
        }
    if exercise_id == "generate":
        weights = {"embedding": randn(VOCAB, 3), "head": randn(3, VOCAB), "positions": randn(10, VOCAB)}
        prompt = torch.tensor([[1, 4, 0], [3, 3, 2]])
        common = {**weights, "prompt": prompt, "block_size": 10, "training": True, "seed": 0}
        return {
            "greedy_cached": {**common, "new": 6, "temperature": 0.0, "top_k": None, "use_cache": True},
            "greedy_uncached": {**common, "new": 6, "temperature": 0.0, "top_k": None, "use_cache": False},
            "sampled_cached": {**common, "new": 6, "temperature": 0.8, "top_k": 3, "use_cache": True, "seed": 7},
            "sampled_uncached": {**common, "new": 6, "temperature": 0.8, "top_k": 3, "use_cache": False, "seed": 7},
            "sampled_plain": {**common, "new": 5, "temperature": 1.5, "top_k": None, "use_cache": True, "seed": 2},
            # T0 + new == block_size exactly: allowed, with and without the cache
            "fills_block": {**common, "new": 7, "temperature": 0.0, "top_k": None, "use_cache": True,
                            "training": False},
            "fills_block_uncached": {**common, "new": 7, "temperature": 0.0, "top_k": None, "use_cache": False},
            # temperature 1 samples like any other (it is not greedy)
            "sampled_unit": {**common, "new": 4, "temperature": 1.0, "top_k": None, "use_cache": False, "seed": 5},
            # a negative temperature goes to the sampler, which raises (greedy is temperature == 0 only)
            "negative_temperature": {**common, "new": 2, "temperature": -1.0, "top_k": None, "use_cache": True},
            "too_long": {**common, "new": 8, "temperature": 0.0, "top_k": None, "use_cache": True},
            "nothing_new": {**common, "new": 0, "temperature": 1.0, "top_k": None, "use_cache": True},
        }
    raise KeyError(exercise_id)


# --- test doubles -------------------------------------------------------------------------


class BigramLM(nn.Module):
    """logits[b, t] = table[inputs[b, t]] + bias; loss the mean cross entropy, plus `poison` (nan
    or inf make it non-finite), plus 1 in training mode (a stand-in for dropout's noise).
    `unused` takes no part in the loss: with stale momentum it moves only if it has a gradient."""

    def __init__(self, table, bias, poison=0.0):
        super().__init__()
        self.table = nn.Parameter(table.clone())
        self.bias = nn.Parameter(bias.clone())
        self.unused = nn.Parameter(torch.linspace(-1.0, 1.0, table.shape[0], device=table.device))
        self.poison = poison
        self.calls = []  # (training, grad enabled) of every call

    def forward(self, inputs, targets=None, past_key_values=None, use_cache=False):
        self.calls.append((self.training, torch.is_grad_enabled()))
        logits = self.table[inputs] + self.bias
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1)) + self.poison
            if self.training:
                loss = loss + 1.0
        return Output(logits, loss, None)


class NamedLikeLM(nn.Module):
    """TransformerLM's parameter names and kinds, one block, width 4: the embedding tables,
    LayerNorm-like gamma/beta, bias-free qkv and proj, fc1 and fc2 with biases, an untied head.
    `odd`: a frozen linear layer and a 2-D parameter that belongs to no nn.Linear."""

    def __init__(self, odd=False, shared=False):
        super().__init__()
        self.token_embedding = nn.Embedding(VOCAB, 4)
        self.position_embedding = nn.Embedding(6, 4)
        self.blocks = nn.ModuleList([_NamedLikeBlock()])
        self.ln_f = _GammaBeta(4)
        self.head = nn.Linear(4, VOCAB, bias=False)
        if odd:
            self.frozen = nn.Linear(4, 4)
            self.frozen.weight.requires_grad_(False)
            self.frozen.bias.requires_grad_(False)
            self.mixer = nn.Parameter(torch.zeros(4, 4))
            self.gate = nn.Linear(4, 1)
        if shared:
            self.echo = nn.Linear(8, 4)  # sharing the block's fc2 weight: one tensor, two names
            self.echo.weight = self.blocks[0].feedforward.fc2.weight


class _GammaBeta(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(width))
        self.bias = nn.Parameter(torch.zeros(width))


class _NamedLikeAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(4, 12, bias=False)
        self.proj = nn.Linear(4, 4, bias=False)


class _NamedLikeFeedForward(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 4)


class _NamedLikeBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_attention = _GammaBeta(4)
        self.attention = _NamedLikeAttention()
        self.ln_feedforward = _GammaBeta(4)
        self.feedforward = _NamedLikeFeedForward()


class PrefixMeanLM(nn.Module):
    """A causal stand-in for TransformerLM with a cache: the logits at absolute position p are
    (mean of the embedding rows of tokens 0..p) @ head + positions[p].  The cache is a list of one
    (keys, values) pair of [B, 1, T_seen, width] (TransformerLM's layout), so the past length is
    read where TransformerLM reads it.  Every call is logged."""

    def __init__(self, embedding, head, positions, block_size):
        super().__init__()
        self.cfg = Settings(block_size)
        self.embedding = nn.Parameter(embedding.clone())
        self.head = nn.Parameter(head.clone())
        self.positions = nn.Parameter(positions.clone())
        self.calls = []

    def forward(self, idx, targets=None, past_key_values=None, use_cache=False):
        past = 0 if past_key_values is None else past_key_values[0][0].shape[2]
        self.calls.append([idx.shape[1], past, bool(use_cache), self.training, torch.is_grad_enabled()])
        if past + idx.shape[1] > self.cfg.block_size:
            raise ValueError("the sequence reaches past block_size")
        rows = self.embedding[idx]
        seen = rows if past_key_values is None else torch.cat([past_key_values[0][0][:, 0], rows], dim=1)
        counts = torch.arange(1, seen.shape[1] + 1, dtype=rows.dtype, device=rows.device)
        means = (seen.cumsum(dim=1) / counts[:, None])[:, past:]
        logits = means @ self.head + self.positions[past : past + idx.shape[1]]
        present = [(seen[:, None], seen[:, None])] if use_cache else None
        return Output(logits, None, present)


def _reversed_probs(logits, temperature=1.0, top_k=None):
    """generate's stand-in for next_token_probs: one-hot at the argmax for temperature 0 (as the
    exercise asks, so either way of writing greedy decoding agrees), otherwise the softmax of the
    NEGATED logits over the temperature, with the first top_k entries raised by one: a
    distribution no correct sampler gives, which shows whether generate passed its arguments.
    A negative temperature raises ValueError, as next_token_probs does."""
    if temperature < 0:
        raise ValueError(f"temperature={temperature} (the stand-in sampler, like next_token_probs, refuses it)")
    if temperature == 0:
        return F.one_hot(logits.argmax(dim=-1), logits.shape[-1]).to(logits.dtype)
    scores = -logits / temperature
    if top_k is not None:
        scores = scores + (torch.arange(logits.shape[-1], device=logits.device) < top_k).to(logits.dtype)
    return torch.softmax(scores, dim=-1)


def _floats(*values):
    """Returned Python floats as one float64 tensor (compared with tolerance), and whether all of
    them were Python floats, as the contract asks."""
    plain = all(isinstance(v, float) for v in values)
    try:
        numbers = torch.tensor([float(v) for v in values], dtype=torch.float64)
    except (TypeError, ValueError, RuntimeError) as exc:
        return f"not numbers: {type(exc).__name__}", plain
    return numbers, plain


def _raised(function):
    """'raised <type>' when `function()` raises (a stub's NotImplementedError propagates), else
    'no error'."""
    try:
        function()
    except NotImplementedError:
        raise
    except Exception as exc:
        return f"raised {type(exc).__name__}"
    return "no error"


# --- probes --------------------------------------------------------------------------------


def run_case(module, exercise_id, case_name, case, device):
    """Outputs of one case.  `case` holds CPU tensors; they are moved to `device`.  Several
    outputs of a case come back as a tuple of (label, value) pairs, which the engine compares item
    by item (properties.py reads them back as a dict)."""
    out = _run(module, exercise_id, case_name, case, device)
    return tuple(out.items()) if isinstance(out, dict) else out


def _run(module, exercise_id, case_name, case, device):
    case = {k: (v.to(device) if isinstance(v, torch.Tensor) else v) for k, v in case.items()}
    if exercise_id == "get_batch":
        return _run_get_batch(module, case)
    if exercise_id == "parameter_groups":
        return _run_parameter_groups(module, case, device)
    if exercise_id == "lr_at":
        return _run_lr_at(module, case_name, case)
    if exercise_id == "train_step":
        return _run_train_step(module, case)
    if exercise_id == "evaluate":
        return _run_evaluate(module, case)
    if exercise_id == "next_token_probs":
        if case_name in ("negative_temperature", "zero_k", "greedy_zero_k"):
            return _raised(lambda: module.next_token_probs(case["logits"], case["temperature"], case["top_k"]))
        return module.next_token_probs(case["logits"], case["temperature"], case["top_k"])
    if exercise_id == "generate":
        return _run_generate(module, case_name, case, device)
    raise KeyError(exercise_id)


class _CountingRandint(torch.overrides.TorchFunctionMode):
    """Counts the torch.randint calls made while it is on: the notebook draws every start with one
    call, and a draw per row gives the same values on the CPU, so only the count shows it."""

    def __init__(self):
        super().__init__()
        self.calls = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.calls += func is torch.randint
        return func(*args, **(kwargs or {}))


def _run_get_batch(module, case):
    torch.manual_seed(1234)  # the global generator too, so a body that uses it gives the same batch every run
    generator = None if case["seed"] is None else torch.Generator().manual_seed(case["seed"])
    if case.get("meta"):
        return on_meta(lambda: module.get_batch(case["data"].to("meta"), case["block_size"], case["batch_size"],
                                                 generator))
    with _CountingRandint() as counted:
        x, y = module.get_batch(case["data"], case["block_size"], case["batch_size"], generator)
    # the next draw of the same generator: the starts are drawn with one call, so it moved exactly that far
    next_draw = torch.randint(1000, (4,), generator=generator)
    return {"x": x, "y": y, "next_draw_after_the_starts": next_draw, "randint_calls": counted.calls}


def _run_parameter_groups(module, case, device):
    model = NamedLikeLM(odd=case["odd"], shared=case.get("shared", False)).to(device)
    groups = module.parameter_groups(model, case["weight_decay"])
    names = {id(p): n for n, p in model.named_parameters()}
    summary = {"count": len(groups)}
    for label, group in zip(("decay", "no_decay"), groups):
        summary[label] = list(group.get("names", []))
        summary[label + "_params"] = [names.get(id(p), "not a parameter of the model") for p in group.get("params", [])]
        summary[label + "_weight_decay"] = group.get("weight_decay", "missing")
    return summary


def _run_lr_at(module, case_name, case):
    settings = {k: case[k] for k in ("max_lr", "min_lr", "warmup_steps", "total_steps")}
    if case_name in ("negative_step", "warmup_too_long"):
        return _raised(lambda: module.lr_at(case["steps"][0], **settings))
    values = [module.lr_at(step, **settings) for step in case["steps"]]
    numbers, plain = _floats(*values)
    return {"lr": numbers, "python_floats": plain}


def _record_step_gradients(optimizer, model):
    """A list that gets, at each optimizer.step(), the total norm of the gradients that step uses."""
    norms = []
    step = optimizer.step

    def recorded(*args, **kwargs):
        grads = [p.grad.detach().reshape(-1) for p in model.parameters() if p.grad is not None]
        norms.append(float(torch.cat(grads).norm()) if grads else 0.0)
        return step(*args, **kwargs)

    optimizer.step = recorded
    return norms


def _run_train_step(module, case):
    model = BigramLM(case["table"], case["bias"], poison=case["poison"])
    decayed = [model.table]
    optimizer = torch.optim.SGD([{"params": decayed, "lr": 0.01, "weight_decay": 0.01},
                                 {"params": [model.bias, model.unused], "lr": 0.03}], lr=0.01, momentum=0.9)
    # a previous step leaves momentum in every buffer, then stale gradients lie everywhere
    model.poison = 0.0
    model(case["previous"], case["targets"]).loss.backward()
    model.unused.grad = torch.ones_like(model.unused)
    optimizer.step()
    for parameter in model.parameters():
        parameter.grad = torch.full_like(parameter, 5.0)
    model.poison = case["poison"]
    before = [p.detach().clone() for p in model.parameters()]
    calls_before = len(model.calls)
    stepped_with = _record_step_gradients(optimizer, model)
    args = (model, optimizer, case["inputs"], case["targets"], case["lr"])
    if case["max_grad_norm"] is not None:
        args += (case["max_grad_norm"],)
    if math.isfinite(case["poison"]):
        loss, grad_norm = module.train_step(*args)
        numbers, plain = _floats(loss, grad_norm)
        return {"loss_and_norm": numbers, "python_floats": plain, "table": model.table.detach(),
                "bias": model.bias.detach(), "unused": model.unused.detach(),
                "lrs": [group["lr"] for group in optimizer.param_groups],
                "step_grad_norms": stepped_with,
                # one step is one forward pass: a second one would draw other dropout masks
                "forward_passes": len(model.calls) - calls_before}
    try:
        module.train_step(*args)
        raised, message = "no error", ""
    except NotImplementedError:
        raise
    except Exception as exc:
        raised, message = f"raised {type(exc).__name__}", str(exc).lower()
    unchanged = all(torch.equal(a, b.detach()) for a, b in zip(before, model.parameters()))
    return {"raised": raised, "names_the_value": ("nan" if math.isnan(case["poison"]) else "inf") in message,
            "parameters_unchanged": unchanged,
            "no_backward": all(p.grad is None or bool((p.grad == 5.0).all()) or not p.grad.any()
                                   for p in model.parameters())}


def _run_evaluate(module, case):
    model = BigramLM(case["table"], case["bias"]).to(case["data"].device)
    model.train(case["training"])
    value = module.evaluate(model, case["data"], case["block_size"], case["batch_size"])
    numbers, plain = _floats(value)
    return {"loss": numbers, "python_float": plain, "training_after": model.training,
            "every_call_in_eval_without_grad": bool(model.calls) and all(not t and not g for t, g in model.calls)}


def _run_generate(module, case_name, case, device):
    sampled = case["temperature"] != 0
    # sampling draws from a CPU generator, so those cases run on the CPU on every device
    where = "cpu" if sampled else device
    model = PrefixMeanLM(case["embedding"].to(where), case["head"].to(where), case["positions"].to(where),
                         case["block_size"])
    model.train(case["training"])
    generator = torch.Generator().manual_seed(case["seed"])
    untouched = generator.get_state()
    prompt = case["prompt"].to(where)
    missing = object()
    saved = module.__dict__.get("next_token_probs", missing)
    module.next_token_probs = _reversed_probs
    torch.manual_seed(99)  # a body that samples from the global generator still gives the same tokens every run
    try:
        call = lambda: module.generate(model, prompt, case["new"], temperature=case["temperature"],  # noqa: E731
                                       top_k=case["top_k"], use_cache=case["use_cache"], generator=generator)
        if case_name == "too_long":
            return {"outcome": _raised(call), "calls": len(model.calls)}
        if case_name == "negative_temperature":
            # the error may come from generate's own check or from the sampler, after a model call
            return {"outcome": _raised(call)}
        tokens = call()
    finally:
        if saved is missing:
            del module.next_token_probs
        else:
            module.next_token_probs = saved
    out = {"tokens": tokens.to(device) if isinstance(tokens, torch.Tensor) else tokens,
           "calls": model.calls, "training_after": model.training}
    if case["new"] > 0:
        # sampling draws with the generator passed in; greedy decoding (the argmax) draws nothing
        out["generator_drawn"] = not torch.equal(generator.get_state(), untouched)
    return out

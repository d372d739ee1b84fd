"""What each chapter-7 exercise is asked to compute: cases, test doubles, probes.

A probe takes a package module (the student's, in the sandboxed worker; the reference, in the
grading process) and one case of inputs chosen by the grader, and returns plain outputs.  The
grader runs the same probe on the reference and compares.  Everything the exercise under test
needs besides itself is a test double built from torch primitives here, so a bug in one
exercise (of this chapter or an earlier one) never costs points in another:

- `TransformerLM.forward` runs with chapter 2's `embed` and chapter 3's `add_positions`
  replaced in the package (`embed_double`, `positions_double`), its blocks replaced by
  `BlockDouble`s (a different one per layer, each with a cache), `ln_f` and the embedding
  dropout by `Affine` maps and the head by a plain nn.Linear with the case's weight;
- `init_weights` runs with chapter 2's `init_normal_` replaced by `uniform_init_double`;
- the three gradient questions run on small models built here (`AuditModel`), each trained
  one backward pass in one of the setups the chapter names (sound, a frozen parameter, a
  parameter the graph never reaches, one whose gradient is all zero, one the optimizer does
  not hold...);
- `ledger_gap` runs on `StackDouble` models with chapter 5's `parameter_count` replaced by
  `ledger_double`, the ledger of that stand-in.

The doubles are deliberately NOT solutions of the exercises they stand in for (student code
runs in the same process as this module and could call them): the lookup adds a multiple of
the id, the positions are subtracted at half weight, the init draws uniform numbers, the ledger
counts a different model.

This file imports only torch and the standard library: the worker loads it inside the sandbox
next to student code.
"""

import contextlib
import importlib
import math
import types

import torch
import torch.nn.functional as F
from torch import nn

# the forward's model: T = 3 (or 5) != d = 4 != V = 7 != C = 6, three layers so order shows
VOCAB, CONTEXT, WIDTH, HEADS, LAYERS, FFN_WIDTH = 7, 6, 4, 2, 3, 8


def make_config(module, vocab=VOCAB, context=CONTEXT, width=WIDTH, heads=HEADS, layers=LAYERS, ffn=FFN_WIDTH):
    return module.Config(vocab_size=vocab, block_size=context, d_model=width, n_heads=heads, n_layers=layers,
                         d_ff=ffn, dropout=0.0)


def make_cases(exercise_id):
    """Inputs for one exercise, identical on every run (fixed generator)."""
    gen = torch.Generator().manual_seed(20261207)

    def randn(*shape):
        return torch.randn(*shape, generator=gen)

    def ids(*shape, high=VOCAB):
        return torch.randint(0, high, shape, generator=gen)

    if exercise_id == "model_forward":
        weights = {"token": randn(VOCAB, WIDTH), "position": randn(CONTEXT, WIDTH), "head": randn(VOCAB, WIDTH)}
        x = ids(2, 4)
        # a cache made of distinct random tensors per layer, shaped like attention's [B, h, T_past, d_h]
        # (the block doubles keep one "head" of width d): a layer reading another's entry shows
        past = [randn(2, 1, 3, WIDTH) for _ in range(2 * LAYERS)]
        return {
            "plain": {"idx": x[:, :3], **weights},
            "targets": {"idx": x[:, :3], "targets": ids(2, 3), **weights},
            "single_long": {"idx": ids(1, 5), "targets": ids(1, 5), **weights},
            "full": {"idx": x, **weights},
            "cache": {"idx": x, **weights},  # three positions with use_cache, then the fourth reading the cache
            "given_past": {"idx": x[:, :2], "past": past, **weights},
            "past_without_cache": {"idx": x[:, :2], "past": past, **weights},
            "past_with_targets": {"idx": x[:, :2], "targets": ids(2, 2), "past": past, **weights},
            "too_long": {"idx": ids(1, CONTEXT + 1), **weights},
            # 3 cached + 4 new = 7 > C = 6: only positions that start after the cache reach past the table
            "too_long_after_past": {"idx": x, "past": past, **weights},
            # a one-layer model with a cache: past_length read from any entry but the first reaches past the list
            "one_layer_cache": {"idx": x[:, :2], "past": past[:2], "layers": 1, **weights},
            # a head 300 times larger: logit gaps of hundreds, where softmax's probabilities underflow to 0 in
            # float32 while the cross entropy itself is a finite number of that size
            "large_logits": {"idx": x[:, :3], "targets": ids(2, 3), **weights, "head": 300 * weights["head"]},
            # the loss is trained: autograd's gradients of it reach the token and position tables and the head
            "gradients": {"idx": x[:, :3], "targets": ids(2, 3), **weights},
        }
    if exercise_id == "init_weights":
        return {
            "small": {"layers": 2, "seed": 11},
            "deep": {"layers": 4, "seed": 12},
            "one_layer": {"layers": 1, "seed": 13},
            "wide": {"layers": 2, "seed": 14, "width": 16, "ffn": 32, "vocab": 32, "context": 8},
            # the same generator state, another global one: the same weights (unless the generator is ignored)
            "small_again": {"layers": 2, "seed": 11, "global_seed": 16},
            "global_rng": {"layers": 2, "seed": None, "global_seed": 15},
        }
    if exercise_id in ("frozen_parameters", "unreached_parameters", "unoptimized_parameters"):
        # ids below 5: row 5 of the 6-row table is never read, so its gradient rows are zero in every setup
        cases = {name: {"ids": ids(2, 5, high=5), "targets": ids(2, 5, high=6)} for name in AUDIT_SETUPS}
        if exercise_id == "unreached_parameters":  # a tie changes no gradient's reach: nothing to ask there
            del cases["tied_unoptimized"]
        # the questions only read the model and its optimizer: no gradient, requires_grad or group changes
        cases["read_only"] = dict(cases[READ_ONLY_SETUP])
        return cases
    if exercise_id == "ledger_gap":
        return {
            "sound": {"shape": [11, 7, 3, 4, 6]},
            "reused": {"shape": [11, 7, 3, 4, 6], "reuse": True},
            "reused_other": {"shape": [5, 9, 4, 3, 10], "reuse": True},
            "one_layer_reused": {"shape": [5, 9, 1, 3, 10], "reuse": True},
            "extra": {"shape": [11, 7, 3, 4, 6], "extra": True},
            "frozen": {"shape": [11, 7, 3, 4, 6], "frozen": True},
            "reused_and_extra": {"shape": [5, 9, 4, 3, 10], "reuse": True, "extra": True},
        }
    raise KeyError(exercise_id)


# --- test doubles ---------------------------------------------------------------


def embed_double(ids, weight):
    """Row ids[b, t] of the table plus a quarter of the id itself: not embed."""
    return weight[ids] + 0.25 * ids.unsqueeze(-1).to(weight.dtype)


def positions_double(token_vectors, table, start=0):
    """Subtracts half of rows start .. start+T-1 of the table: not add_positions.  ValueError when
    start + T > C, as add_positions raises."""
    length = token_vectors.shape[1]
    if start + length > table.shape[0]:
        raise ValueError(f"positions {start}..{start + length - 1} reach past the table's {table.shape[0]} rows")
    return token_vectors - 0.5 * table[start : start + length]


def uniform_init_double(weight, std=0.02, generator=None):
    """Fills `weight` in place with uniform numbers of standard deviation `std`, drawn on the CPU
    from `generator` (torch's global one when None) and copied to the weight's device: not
    init_normal_ (whose numbers are normal)."""
    drawn = (torch.rand(tuple(weight.shape), generator=generator, dtype=torch.float64) * 2 - 1) * math.sqrt(3.0) * std
    with torch.no_grad():
        weight.copy_(drawn.to(weight.dtype))
    return weight


def ledger_double(V, C, N, d, f):
    """The ledger of StackDouble (V*d + C*d + N blocks of d*f + f + a final d + an output bias of V):
    not parameter_count.  V and C enter differently, so that swapping them shows."""
    return V * d + C * d + N * (d * f + f) + d + V


class Affine(nn.Module):
    """x -> scale * x + shift: a stand-in for ln_f or the dropout whose effect is easy to tell apart."""

    def __init__(self, scale, shift):
        super().__init__()
        self.scale, self.shift = scale, shift

    def forward(self, x):
        return self.scale * x + self.shift


class BlockDouble(nn.Module):
    """A causal stand-in for a block with a KV cache: each position gets `scale` times the tanh of
    the mean of itself and every earlier position (cached ones too), plus `shift`.  Its present
    is (seen, 2 * seen) with seen, every input so far, as [B, 1, T_seen, d] (one head of width d),
    so the time axis of a cached key is axis 2 as in attention's cache."""

    def __init__(self, scale, shift):
        super().__init__()
        self.scale, self.shift = scale, shift

    def forward(self, hidden, past_key_value=None, use_cache=False):
        seen = hidden if past_key_value is None else torch.cat([past_key_value[0][:, 0], hidden], dim=1)
        counts = torch.arange(1, seen.shape[1] + 1, dtype=hidden.dtype, device=hidden.device)
        means = seen.cumsum(dim=1) / counts[:, None]
        out = hidden + self.scale * torch.tanh(means[:, -hidden.shape[1]:]) + self.shift
        return out, ((seen[:, None], 2 * seen[:, None]) if use_cache else None)


# one per layer, all different, so that an order, a skipped layer or a repeated one shows
LAYER_DOUBLES = ((0.9, 0.3), (-0.6, 0.5), (1.4, -0.2))


@contextlib.contextmanager
def _replaced(module, **doubles):
    """Run with the module's attributes replaced by doubles, restored afterwards."""
    missing = object()
    saved = {name: getattr(module, name, missing) for name in doubles}
    for name, value in doubles.items():
        setattr(module, name, value)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is missing:
                delattr(module, name)
            else:
                setattr(module, name, value)


def _sibling(module, name):
    """Another module of the package `module` belongs to (hero_transformer, or the grader's private copy)."""
    return importlib.import_module(f"{module.__name__.rpartition('.')[0]}.{name}")


# --- the three gradient questions: setups built here, one backward pass each -----------


class AuditModel(nn.Module):
    """A small model of torch parts: an embedding, a mixing layer, a gate, two scale vectors with
    equal values, a spare layer and an untied head.  `wiring` says which parts the forward uses:
    the spare layer only when asked (otherwise the graph never reaches it), the gate on its input
    or on zeros (then its weight's gradient is exactly zero while its bias's is not), the spare
    bias whole or only as the difference of its first two entries (then its gradient is (s, -s, 0):
    its entries sum to exactly 0, yet not all are 0)."""

    def __init__(self, use_spare=True, gate_reads_zero=False, spare_bias_difference=False, tie=False, gate_scale=1.0):
        super().__init__()
        # a persistent buffer: state_dict() lists it among the parameters' names, named_parameters() does not
        self.register_buffer("steps", torch.zeros(()))
        self.use_spare, self.gate_reads_zero = use_spare, gate_reads_zero
        self.spare_bias_difference, self.gate_scale = spare_bias_difference, gate_scale
        self.embedding = nn.Embedding(6, 3)
        self.mixer = nn.Linear(3, 3)
        self.gate = nn.Linear(3, 3)
        self.scale = nn.Parameter(torch.ones(3))
        self.other_scale = nn.Parameter(torch.ones(3))  # equal values to `scale`: a different parameter
        self.spare = nn.Linear(3, 3)
        self.head = nn.Linear(3, 6, bias=False)
        if tie:  # one tensor under two names: named_parameters() gives it once, as embedding.weight
            self.head.weight = self.embedding.weight

    def forward(self, ids):
        x = self.embedding(ids)
        x = x + torch.tanh(self.mixer(x))
        x = x + self.gate(torch.zeros_like(x) if self.gate_reads_zero else self.gate_scale * x)
        x = x * self.scale + 0.5 * x * self.other_scale
        if self.use_spare and self.spare_bias_difference:
            x = x + F.linear(x, self.spare.weight) + (self.spare.bias[0] - self.spare.bias[1])
        elif self.use_spare:
            x = x + self.spare(x)
        return self.head(x)


def _no_head(model):
    return [p for name, p in model.named_parameters() if name != "head.weight"]


AUDIT_SETUPS = {
    # name: (model keywords, parameters frozen before training, the optimizer's param groups)
    "sound": ({}, (), lambda m: [{"params": list(m.parameters())}]),
    "frozen": ({}, ("embedding.weight",), lambda m: [{"params": [p for p in m.parameters() if p.requires_grad]}]),
    "frozen_still_held": ({}, ("mixer.bias",), lambda m: [{"params": list(m.parameters())}]),
    "unreached": ({"use_spare": False}, (), lambda m: [{"params": list(m.parameters())}]),
    "zero_gradient": ({"gate_reads_zero": True}, (), lambda m: [{"params": list(m.parameters())}]),
    # spare.bias gets a gradient whose entries cancel: reached, so listed by none of the questions
    "cancelling_gradient": ({"spare_bias_difference": True}, (), lambda m: [{"params": list(m.parameters())}]),
    "unoptimized": ({}, (), lambda m: [{"params": _no_head(m)}]),
    "equal_values_left_out": ({}, (), lambda m: [{"params": [p for p in m.parameters() if p is not m.other_scale]}]),
    "two_groups": ({}, (), lambda m: [{"params": [p for p in m.parameters() if p.dim() == 2]},
                                      {"params": [p for p in m.parameters() if p.dim() < 2], "weight_decay": 0.0}]),
    "everything_at_once": ({"use_spare": False, "gate_reads_zero": True}, ("mixer.weight",),
                           lambda m: [{"params": [m.embedding.weight, m.scale]},
                                      {"params": [m.gate.weight, m.gate.bias, m.spare.weight, m.spare.bias]}]),
    # two frozen, registered in an order that is not alphabetical: named_parameters() order is the rule
    "several_frozen": ({}, ("mixer.weight", "gate.bias"), lambda m: [{"params": [p for p in m.parameters()
                                                                                 if p.requires_grad]}]),
    # the head tied to the embedding: one parameter, listed once by its named_parameters() name
    "tied_frozen": ({"tie": True}, ("embedding.weight",), lambda m: [{"params": [p for p in m.parameters()
                                                                                 if p.requires_grad]}]),
    "tied_unoptimized": ({"tie": True}, (), lambda m: [{"params": [p for p in m.parameters()
                                                                   if p is not m.embedding.weight]}]),
    # the gate reads its input scaled by 1e-9: its weight's gradient is tiny, not zero, so it was reached
    "tiny_gradient": ({"gate_scale": 1e-9}, (), lambda m: [{"params": list(m.parameters())}]),
    # and by 1e-25: its entries' squares underflow float32 to 0, so the gradient's norm is 0 where no entry is
    "tinier_gradient": ({"gate_scale": 1e-25}, (), lambda m: [{"params": list(m.parameters())}]),
    # the optimizer holds a detached alias of the head's weight (the same memory, another tensor object): a
    # parameter is held only when that very object is in a group, so the head is not optimized
    "alias_held": ({}, (), lambda m: [{"params": _no_head(m) + [m.head.weight.detach().requires_grad_()]}]),
}
READ_ONLY_SETUP = "everything_at_once"  # the `read_only` case: what a question's call changes in it


def _audit_setup(case_name, case, device):
    """The setup's model after one forward and backward pass, and its optimizer."""
    keywords, frozen, groups = AUDIT_SETUPS[case_name]
    torch.manual_seed(7)  # the parts' own initial values (every setup starts from the same ones)
    model = AuditModel(**keywords).to(device)
    for name, parameter in model.named_parameters():
        if name in frozen:
            parameter.requires_grad_(False)
    optimizer = torch.optim.SGD(groups(model), lr=0.1)
    with torch.enable_grad():
        logits = model(case["ids"])
        F.cross_entropy(logits.reshape(-1, logits.shape[-1]), case["targets"].reshape(-1)).backward()
    return model, optimizer


def _changed_by(call, model, optimizer):
    """The parameters whose gradient or requires_grad a call changed, and "optimizer.param_groups" when
    it changed which tensors the groups hold."""
    before = {name: (parameter.requires_grad, None if parameter.grad is None else parameter.grad.clone())
              for name, parameter in model.named_parameters()}
    held = [[id(parameter) for parameter in group["params"]] for group in optimizer.param_groups]
    call()
    changed = []
    for name, parameter in model.named_parameters():
        flag, grad = before.get(name, (None, None))
        same_grad = (grad is None and parameter.grad is None) or (
            grad is not None and parameter.grad is not None and torch.equal(grad, parameter.grad))
        if parameter.requires_grad != flag or not same_grad:
            changed.append(name)
    if held != [[id(parameter) for parameter in group["params"]] for group in optimizer.param_groups]:
        changed.append("optimizer.param_groups")
    return changed


# --- the ledger: stand-in models whose ledger is ledger_double ----------------------------


class StackDouble(nn.Module):
    """A stand-in model with a `cfg`: a token table [V, d], a position table [C, d], N blocks (one
    nn.Linear(d, f) each, or one object used N times), a final vector of d, an output bias of V;
    a persistent buffer that is no parameter; optionally an extra layer the ledger does not know,
    and a frozen table."""

    def __init__(self, V, C, N, d, f, reuse=False, extra=False, frozen=False):
        super().__init__()
        self.cfg = types.SimpleNamespace(vocab_size=V, block_size=C, d_model=d, n_heads=1, n_layers=N, d_ff=f,
                                         dropout=0.0)
        self.token = nn.Embedding(V, d)
        self.position = nn.Parameter(torch.zeros(C, d))
        one = nn.Linear(d, f)
        self.blocks = nn.ModuleList([one] * N if reuse else [nn.Linear(d, f) for _ in range(N)])
        self.final = nn.Parameter(torch.ones(d))
        self.output_bias = nn.Parameter(torch.zeros(V))
        self.register_buffer("mask", torch.ones(C, C))
        if extra:
            self.extra = nn.Linear(d, 2)
        if frozen:
            self.token.weight.requires_grad_(False)


# --- probes ------------------------------------------------------------------------------


def run_case(module, exercise_id, case_name, case, device):
    """Outputs of one case.  `case` holds CPU tensors; they are moved to `device`."""
    case = {k: (v.to(device) if isinstance(v, torch.Tensor) else v) for k, v in case.items()}
    if exercise_id == "model_forward":
        if case_name == "gradients":
            return _forward_gradients(module, case, device)
        with torch.no_grad():
            return _run_forward(module, case_name, case, device)
    if exercise_id == "init_weights":
        return _run_init(module, case, device)
    if exercise_id in ("frozen_parameters", "unreached_parameters", "unoptimized_parameters"):
        model, optimizer = _audit_setup(READ_ONLY_SETUP if case_name == "read_only" else case_name, case, device)
        if exercise_id == "frozen_parameters":
            def call():
                return module.frozen_parameters(model)
        elif exercise_id == "unreached_parameters":
            def call():
                return module.unreached_parameters(model)
        else:
            def call():
                return module.unoptimized_parameters(model, optimizer)
        if case_name == "read_only":
            return (("what the call changed in the model or its optimizer", _changed_by(call, model, optimizer)),)
        return call()
    if exercise_id == "ledger_gap":
        torch.manual_seed(0)
        stack = StackDouble(*case["shape"], reuse=case.get("reuse", False), extra=case.get("extra", False),
                            frozen=case.get("frozen", False)).to(device)
        with _replaced(module, parameter_count=ledger_double):
            return module.ledger_gap(stack)
    raise KeyError(exercise_id)


def _forward_model(module, case, device):
    layers = case.get("layers", LAYERS)
    lm = module.TransformerLM(make_config(module, layers=layers)).to(device).eval()
    lm.token_embedding.weight.copy_(case["token"])
    lm.position_embedding.weight.copy_(case["position"])
    lm.blocks = nn.ModuleList(BlockDouble(scale, shift) for scale, shift in LAYER_DOUBLES[:layers])
    lm.ln_f = Affine(2.0, -1.0)
    lm.dropout = Affine(1.5, 0.0)
    lm.head = nn.Linear(WIDTH, VOCAB, bias=False).to(device)
    lm.head.weight.copy_(case["head"])
    return lm


def _plain(out):
    """An LMOutput as plain data: its type's name, logits, loss and cache."""
    logits, loss, presents = out
    return type(out).__name__, logits, loss, presents


def _run_forward(module, case_name, case, device):
    lm = _forward_model(module, case, device)
    idx, targets = case["idx"], case.get("targets")
    past = None
    if "past" in case:
        flat = case["past"]
        past = [(flat[2 * layer], flat[2 * layer + 1]) for layer in range(len(flat) // 2)]
    given = list(past or ())  # the caller's cache list: made here, so the contract check cannot see it change
    with _replaced(_sibling(module, "embeddings"), embed=embed_double), \
            _replaced(_sibling(module, "positions"), add_positions=positions_double):
        try:
            if case_name == "cache":
                first = _plain(lm(idx[:, :3], None, None, True))
                second = _plain(lm(idx[:, 3:], None, first[3], True))
                return first[0], torch.cat([first[1], second[1]], dim=1), second[2], second[3]
            use_cache = case_name not in ("past_without_cache", "plain", "full")
            out = _plain(lm(idx, targets, past, use_cache))
            if past is not None and (len(past) != len(given) or any(a is not b for a, b in zip(past, given))):
                return "model_forward changed the past_key_values list it was given (the caller's cache)"
            return out
        except NotImplementedError:
            raise  # a stub must still read as "not implemented"
        except (ValueError, IndexError) as exc:  # the right error, or the one a lookup past the table gives
            return f"raised {type(exc).__name__}"


def _forward_gradients(module, case, device):
    """((parameter name, autograd's gradient of the loss for it)...) for the parts the forward itself
    wires (the tables and the head; the blocks and ln_f are doubles), None where none reaches it (a loss
    rebuilt from .item(), a table detached)."""
    with torch.no_grad():
        lm = _forward_model(module, case, device)
    with _replaced(_sibling(module, "embeddings"), embed=embed_double), \
            _replaced(_sibling(module, "positions"), add_positions=positions_double), torch.enable_grad():
        out = lm(case["idx"], case["targets"])
        loss = out[1] if isinstance(out, tuple) and len(out) == 3 else None
        if isinstance(loss, torch.Tensor) and loss.requires_grad and loss.dim() == 0:
            loss.backward()
    return tuple((name, getattr(lm, part).weight.grad) for name, part in
                 (("token_embedding.weight", "token_embedding"), ("position_embedding.weight", "position_embedding"),
                  ("head.weight", "head")))


def _run_init(module, case, device):
    width, ffn = case.get("width", WIDTH), case.get("ffn", FFN_WIDTH)
    config = make_config(module, vocab=case.get("vocab", VOCAB), context=case.get("context", CONTEXT), width=width,
                         ffn=ffn, layers=case["layers"])
    lm = module.TransformerLM(config).to(device)
    with torch.no_grad():  # values no correct init keeps: a parameter it leaves alone shows
        for index, parameter in enumerate(lm.parameters()):
            parameter.fill_(3.0 + index)
    generator = None if case["seed"] is None else torch.Generator().manual_seed(case["seed"])
    if case.get("global_seed") is not None:
        torch.manual_seed(case["global_seed"])
    else:
        torch.manual_seed(99)  # a global state different from the generator's: ignoring it shows
    held = [id(parameter) for parameter in lm.parameters()]  # an optimizer may already hold these objects
    with _replaced(_sibling(module, "embeddings"), init_normal_=uniform_init_double):
        returned = module.init_weights(lm, generator=generator)
    same = "the model's own parameter objects, filled in place" if held == [
        id(parameter) for parameter in lm.parameters()] else "new parameter objects in place of the model's own"
    return returned is lm, [(name, parameter.detach().clone()) for name, parameter in lm.named_parameters()], same

"""What each chapter-5 exercise is asked to compute: cases, test doubles, probes.

A probe takes a model module (the student's, in the sandboxed worker; the
reference, in the grading process) and one case of inputs chosen by the
grader, and returns plain outputs.  The grader runs the same probe on the
reference and compares.  Everything the exercise under test needs besides
itself is a test double built from torch primitives here, so a bug in one
exercise never costs points in another, and the worker holds no solution code.

This file imports only torch, the standard library and the grader's probes module: the worker loads it
inside the sandbox next to student code.
"""

import contextlib
import math

import torch
import torch.nn.functional as F
from torch import nn

try:  # in the grader, a module of the autograder package
    from autograder.probes import autograd_gradients
except ImportError:  # in the worker, the grader's probes module next to it
    from probes import autograd_gradients

WIDTH, HEADS, FFN_WIDTH = 4, 2, 8  # T = 3 != d = 4, so swapped axes show


def make_config(module):
    return module.Config(vocab_size=10, block_size=6, d_model=WIDTH, n_heads=HEADS, n_layers=2, d_ff=FFN_WIDTH,
                         dropout=0.0)


def make_cases(exercise_id):
    """Inputs for one exercise, identical on every run (fixed generator)."""
    gen = torch.Generator().manual_seed(20261129)

    def randn(*shape):
        return torch.randn(*shape, generator=gen)

    if exercise_id == "layer_norm":
        x = randn(2, 3, WIDTH)
        gamma, beta = 1 + 0.5 * randn(WIDTH), 0.5 * randn(WIDTH)
        ones, zeros = torch.ones(WIDTH), torch.zeros(WIDTH)
        return {
            "random": {"x": x, "gamma": gamma, "beta": beta},
            "shifted": {"x": x + 7.5, "gamma": gamma, "beta": beta},
            # far from 0: E[x^2] - E[x]^2 loses the variance to cancellation (float64 values near x^2 = 1e16
            # are 2 apart, the variance is about 4), subtracting the mean first does not. In float32 the
            # reference itself is off by more than the tolerance long before the moments fail, so float64
            "far_offset": {"x": 2 * x.double() + 1e8, "gamma": gamma, "beta": beta},
            "default_affine": {"x": 3 * x + 1, "gamma": ones, "beta": zeros},
            "hand": {"x": torch.tensor([[[1.0, 3.0]]]), "gamma": torch.ones(2), "beta": torch.zeros(2)},
            "constant": {"x": torch.full((1, 2, WIDTH), 2.0), "gamma": gamma, "beta": beta},
            "small_variance": {"x": torch.tensor([[[0.0, 0.002, -0.001, 0.004]]]), "gamma": ones, "beta": zeros},
            # a LayerNorm built with another eps: the body reads self.eps, not the course's 1e-5
            "own_eps": {"x": 0.2 * x, "gamma": gamma, "beta": beta, "eps": 0.05},
            # autograd's gradients of <output, upstream> for x, gamma and beta: what training uses
            "gradients": {"x": x, "gamma": gamma, "beta": beta, "upstream": randn(2, 3, WIDTH)},
        }
    if exercise_id == "gelu":
        a = 1 / math.sqrt(1 + 1e-5)
        return {
            "grid": {"x": torch.linspace(-6.0, 6.0, 121)},
            "tensor": {"x": randn(2, 3, WIDTH)},
            "symmetry": {"x": torch.tensor([a, -a])},
            "gradients": {"x": randn(2, 3, WIDTH), "upstream": randn(2, 3, WIDTH)},
            "float64": {"x": 3 * randn(2, WIDTH).double()},  # float64 in, float64 out
        }
    if exercise_id == "feedforward":
        return {
            "random": {
                "x": randn(2, 3, WIDTH),
                "fc1.weight": 0.5 * randn(FFN_WIDTH, WIDTH), "fc1.bias": 0.5 * randn(FFN_WIDTH),
                "fc2.weight": 0.5 * randn(WIDTH, FFN_WIDTH), "fc2.bias": 0.5 * randn(WIDTH),
            },
            # f = d: x @ W and x @ W.T both run, so a storage-matrix mix-up shows in the values
            "square": {
                "x": randn(2, 3, WIDTH),
                "fc1.weight": 0.5 * randn(WIDTH, WIDTH), "fc1.bias": 0.5 * randn(WIDTH),
                "fc2.weight": 0.5 * randn(WIDTH, WIDTH), "fc2.bias": 0.5 * randn(WIDTH),
            },
            # training mode with doubles for self.activation (x^2) and self.dropout (kept entries fixed by
            # the case): the body must pass through both, in the order fc1, activation, fc2, dropout
            "own_parts": {
                "x": randn(2, 3, WIDTH),
                "fc1.weight": 0.5 * randn(FFN_WIDTH, WIDTH), "fc1.bias": 0.5 * randn(FFN_WIDTH),
                "fc2.weight": 0.5 * randn(WIDTH, FFN_WIDTH), "fc2.bias": 0.5 * randn(WIDTH),
                "keep": randn(2, 3, WIDTH) > -0.5,
            },
            # the gradient of x and of every weight, for the output weighted by `upstream`: values computed
            # off the graph are right and train nothing
            "gradients": {
                "x": randn(2, 3, WIDTH),
                "fc1.weight": 0.5 * randn(FFN_WIDTH, WIDTH), "fc1.bias": 0.5 * randn(FFN_WIDTH),
                "fc2.weight": 0.5 * randn(WIDTH, FFN_WIDTH), "fc2.bias": 0.5 * randn(WIDTH),
                "upstream": randn(2, 3, WIDTH),
            },
        }
    if exercise_id == "block":
        x = randn(2, 3, WIDTH)
        changed_future = x.clone()
        changed_future[:, -1] = randn(2, WIDTH)
        weights = {name: 0.5 * randn(*shape) for name, shape in _block_weight_shapes().items()}
        return {
            "wiring": {"x": x},
            "real": {"x": x, **weights},
            "changed_future": {"x": changed_future, **weights},
            "zero_branches": {"x": x},
            "cache": {"x": x, **weights},
            "given_past": {"x": x, **weights},
            "training": {"x": x},
            "calls": {"x": x},  # how many times the forward calls each sub-module
            # the present the attention gave, handed back as is (原样): its own tensors, not copies or detached ones
            "present_as_is": {"x": x},
            # the real parts, as in "real": the gradient of x and of both norms' and the FFN's weights
            "gradients": {"x": x, **weights, "upstream": randn(2, 3, WIDTH)},
        }
    if exercise_id == "parameter_count":
        return {
            "chapter": {"args": [32, 64, 2, 64, 256]},
            "small": {"args": [10, 6, 2, 4, 8]},
            "odd": {"args": [7, 5, 3, 6, 10]},
            "square": {"args": [50, 11, 4, 12, 12]},
            "one": {"args": [1, 1, 1, 1, 1]},
        }
    raise KeyError(exercise_id)


def _block_weight_shapes():
    return {
        "ln_attention.weight": (WIDTH,), "ln_attention.bias": (WIDTH,), "ln_feedforward.weight": (WIDTH,), "ln_feedforward.bias": (WIDTH,),
        "fc1.weight": (FFN_WIDTH, WIDTH), "fc1.bias": (FFN_WIDTH,),
        "fc2.weight": (WIDTH, FFN_WIDTH), "fc2.bias": (WIDTH,),
    }


# --- test doubles -------------------------------------------------------------


class Affine(nn.Module):
    """x -> scale * x + shift: a stand-in LayerNorm whose output is easy to tell apart."""

    def __init__(self, scale, shift):
        super().__init__()
        self.scale, self.shift = scale, shift

    def forward(self, x):
        return self.scale * x + self.shift


class PrefixMeanAttention(nn.Module):
    """A causal stand-in for attention with a KV cache: each position receives
    `scale` times the mean of itself and every earlier position (cached ones too).
    `present` is the (keys, values) pair of everything seen so far."""

    def __init__(self, scale=0.5):
        super().__init__()
        self.scale = scale

    def forward(self, x, past_key_value=None, use_cache=False):
        seen = x if past_key_value is None else torch.cat([past_key_value[0], x], dim=1)
        counts = torch.arange(1, seen.shape[1] + 1, dtype=x.dtype, device=x.device)
        means = seen.cumsum(dim=1) / counts[:, None]
        out = self.scale * means[:, -x.shape[1]:]
        return out, ((seen, seen) if use_cache else None)


class Square(nn.Module):
    def forward(self, x):
        return x * x


class Zero(nn.Module):
    def forward(self, x):
        return torch.zeros_like(x)


class ZeroAttention(nn.Module):
    def forward(self, x, past_key_value=None, use_cache=False):
        return torch.zeros_like(x), None


class Counted(nn.Module):
    """The module it wraps, with a count of its calls and what each returned."""

    def __init__(self, inner):
        super().__init__()
        self.inner, self.calls, self.results = inner, 0, []

    def forward(self, *args, **kwargs):
        self.calls += 1
        self.results.append(self.inner(*args, **kwargs))
        return self.results[-1]


class KeptDropout(nn.Module):
    """Dropout whose kept entries are given (the same on every device): in training mode it keeps
    the entries of `keep` and scales them by 1/(1-p); in evaluation mode it is the identity.  Applied
    to a tensor of another shape than `keep`, it scales everything by 3 (still visible)."""

    def __init__(self, keep, p=0.3):
        super().__init__()
        self.keep, self.p = keep, p

    def forward(self, t):
        if not self.training:
            return t
        if t.shape != self.keep.shape:
            return 3.0 * t
        return torch.where(self.keep, t / (1 - self.p), torch.zeros_like(t))


def _linear(weight, bias):
    layer = nn.Linear(weight.shape[1], weight.shape[0])
    with torch.no_grad():
        layer.weight.copy_(weight)
        layer.bias.copy_(bias)
    return layer


def _layer_norm(weight, bias):
    norm = nn.LayerNorm(weight.shape[0], eps=1e-5)
    with torch.no_grad():
        norm.weight.copy_(weight)
        norm.bias.copy_(bias)
    return norm


@contextlib.contextmanager
def _exact_gelu_in(module):
    """Run with the module-level `gelu` replaced by torch's exact GELU."""
    missing = object()
    saved = getattr(module, "gelu", missing)  # absent when its definition did not compile
    module.gelu = lambda t: F.gelu(t, approximate="none")
    try:
        yield
    finally:
        if saved is missing:
            del module.gelu
        else:
            module.gelu = saved


# --- probes ----------------------------------------------------------------------


def run_case(module, exercise_id, case_name, case, device):
    """Outputs of one case.  `case` holds CPU tensors; they are moved to `device`."""
    case = {k: (v.to(device) if isinstance(v, torch.Tensor) else v) for k, v in case.items()}
    with torch.no_grad():
        if exercise_id == "layer_norm":
            eps = {"eps": case["eps"]} if "eps" in case else {}
            # in the input's dtype, as a model in float64 would be (far_offset is float64)
            norm = module.LayerNorm(case["x"].shape[-1], **eps).to(device=device, dtype=case["x"].dtype)
            norm.weight.copy_(case["gamma"])
            norm.bias.copy_(case["beta"])
            if case_name == "gradients":
                return autograd_gradients(norm, {"x": case["x"]}, case["upstream"],
                                          {"weight": norm.weight, "bias": norm.bias})
            return norm(case["x"])
        if exercise_id == "gelu":
            if case_name == "gradients":
                return autograd_gradients(module.gelu, {"x": case["x"]}, case["upstream"])
            return module.gelu(case["x"])
        if exercise_id == "feedforward":
            ffn = module.FeedForward(make_config(module)).to(device).eval()
            ffn.fc1 = _linear(case["fc1.weight"], case["fc1.bias"]).to(device)
            ffn.fc2 = _linear(case["fc2.weight"], case["fc2.bias"]).to(device)
            ffn.activation = nn.GELU()
            if case_name == "own_parts":
                ffn.activation, ffn.dropout = Square(), KeptDropout(case["keep"]).to(device)
                ffn.train()
            with _exact_gelu_in(module):
                if case_name == "gradients":
                    return autograd_gradients(ffn, {"x": case["x"]}, case["upstream"], dict(ffn.named_parameters()))
                return ffn(case["x"])
        if exercise_id == "block":
            return _run_block(module, case_name, case, device)
        if exercise_id == "parameter_count":
            return module.parameter_count(*case["args"])
    raise KeyError(exercise_id)


def _run_block(module, case_name, case, device):
    block = module.TransformerBlock(make_config(module)).to(device).eval()
    x = case["x"]
    if case_name == "wiring":
        # distinct doubles: LN1 -> 2x+1, LN2 -> x-3, attention -> half the prefix mean, FFN -> x^2
        block.ln_attention, block.ln_feedforward = Affine(2.0, 1.0), Affine(1.0, -3.0)
        block.attention, block.feedforward = PrefixMeanAttention(), Square()
        return block(x, None, True)
    if case_name == "zero_branches":
        # doubles for the norms too: the identity must hold whatever state the student's LayerNorm is in
        block.ln_attention, block.ln_feedforward = Affine(2.0, 1.0), Affine(1.0, -3.0)
        block.attention, block.feedforward = ZeroAttention(), Zero()
        return block(x)
    if case_name == "calls":
        parts = {"ln_attention": Affine(2.0, 1.0), "attention": PrefixMeanAttention(),
                 "ln_feedforward": Affine(1.0, -3.0), "feedforward": Square()}
        for name, part in parts.items():
            setattr(block, name, Counted(part))
        block(x, None, True)
        return {name: getattr(block, name).calls for name in parts}
    if case_name == "present_as_is":
        block.ln_attention, block.ln_feedforward = Affine(2.0, 1.0), Affine(1.0, -3.0)
        block.attention, block.feedforward = Counted(PrefixMeanAttention()), Square()
        _, present = block(x, None, True)
        given = block.attention.results[-1][1] if block.attention.results else None
        if isinstance(present, (tuple, list)) and given is not None and len(present) == 2 and \
                all(mine is theirs for mine, theirs in zip(present, given)):
            return "the attention's own keys and values"
        return "not the attention's own keys and values (a copy, a detached or another tensor, or none)"
    if case_name == "training":
        # the doubles have no dropout, so a correct block is deterministic in training mode too
        block.ln_attention, block.ln_feedforward = Affine(2.0, 1.0), Affine(1.0, -3.0)
        block.attention, block.feedforward = PrefixMeanAttention(), Square()
        block.train()
        torch.manual_seed(0)
        return block(x)
    block.ln_attention = _layer_norm(case["ln_attention.weight"], case["ln_attention.bias"]).to(device)
    block.ln_feedforward = _layer_norm(case["ln_feedforward.weight"], case["ln_feedforward.bias"]).to(device)
    block.attention = PrefixMeanAttention()
    block.feedforward = nn.Sequential(
        _linear(case["fc1.weight"], case["fc1.bias"]), nn.GELU(), _linear(case["fc2.weight"], case["fc2.bias"])
    ).to(device)
    if case_name in ("real", "changed_future"):
        return block(x)
    if case_name == "gradients":
        return autograd_gradients(lambda t: block(t)[0], {"x": case["x"]}, case["upstream"],
                                  dict(block.named_parameters()))
    if case_name == "cache":
        # the first two positions with use_cache, then the last one reading the cache
        head, present = block(x[:, :2], None, True)
        tail, present = block(x[:, 2:], present, True)
        return torch.cat([head, tail], dim=1), present
    if case_name == "given_past":
        # a cache made by the attention double itself, so the block's own first call does not matter
        _, past = block.attention(block.ln_attention(x[:, :2]), None, True)
        return block(x[:, 2:], past, True)
    raise KeyError(case_name)

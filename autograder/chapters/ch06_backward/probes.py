"""What each chapter-6 exercise is asked to compute: cases, test doubles, probes.

A probe takes the backward module (the student's, in the sandboxed worker; the reference, in
the grading process) and one case of inputs chosen by the grader, and returns plain outputs.
The grader runs the same probe on the reference and compares.  The four small backwards need
nothing else (residual_backward's branch is a closure of torch ops built here from the case,
which counts its calls: the docstring says call it exactly once, and the count is an output).
`feedforward_sublayer_backward` calls the other four by name: its probes run with those four
replaced by test doubles, each the CORRECT gradient of a DIFFERENT function (RMSNorm for
LayerNorm, SiLU for GELU, a doubled linear map, a residual with a doubled branch), so none is a
solution of the exercise it stands in for, and the reference, run with the same doubles, says
what the wiring must give.  Its `ln` and `ffn` are stand-in modules with the attributes of
model.LayerNorm and model.FeedForward (weight, bias, eps; fc1, activation, fc2, dropout).

Everything runs under the exercise's forbidden-call watch, so nothing here differentiates
automatically.  This file imports only torch, the standard library and the grader's own probes
module (on_meta): the worker loads it inside the sandbox next to student code.
"""

import contextlib

import torch
from torch import nn

try:  # in the grader, a module of the autograder package
    from autograder.probes import on_meta
except ImportError:  # in the worker, the grader's probes module next to it
    from probes import on_meta

WIDTH, LENGTH, HIDDEN = 4, 3, 8  # T = 3 != d = 4 != f = 8, so swapped axes show
SUBLAYER_KEYS = ("ln.weight", "ln.bias", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias")


def make_cases(exercise_id):
    """Inputs for one exercise, identical on every run (fixed generator)."""
    gen = torch.Generator().manual_seed(20261206)

    def randn(*shape, dtype=torch.float64):
        return torch.randn(*shape, generator=gen, dtype=torch.float64).to(dtype)

    if exercise_id == "layer_norm_backward":
        x, weight, grad = 2 * randn(2, LENGTH, WIDTH) + 1, 1 + 0.5 * randn(WIDTH), randn(2, LENGTH, WIDTH)
        return {
            "float64": {"grad_out": grad, "x": x, "weight": weight},
            "float32": {"grad_out": grad.float(), "x": x.float(), "weight": weight.float()},
            "shifted": {"grad_out": grad, "x": x + 7.5, "weight": weight},
            "constant": {"grad_out": grad[:1], "x": torch.full((1, LENGTH, WIDTH), 2.0, dtype=torch.float64),
                         "weight": weight},
            # v of the order of eps: where eps sits (inside the root, with d not d-1) shows
            "small_variance": {"grad_out": randn(1, 1, WIDTH),
                               "x": torch.tensor([[[0.0, 0.002, -0.001, 0.004]]], dtype=torch.float64),
                               "weight": weight},
            "vector": {"grad_out": randn(5), "x": randn(5), "weight": 1 + 0.5 * randn(5)},  # no leading axis
            "given_eps": {"grad_out": randn(2, 2, 6), "x": 0.1 * randn(2, 2, 6), "weight": 1 + 0.5 * randn(6),
                          "eps": 1e-2},
            # inputs near 1e8 (float64): E[x^2] - E[x]^2 cancels there; subtracting the mean first does not
            "far_offset": {"grad_out": grad, "x": x + 1e8, "weight": weight},
        }
    if exercise_id == "gelu_backward":
        return {
            "grid": {"grad_out": torch.ones(121), "x": torch.linspace(-6.0, 6.0, 121)},
            "float64": {"grad_out": randn(2, LENGTH, WIDTH), "x": 2 * randn(2, LENGTH, WIDTH)},
            "float32": {"grad_out": randn(2, LENGTH, WIDTH, dtype=torch.float32),
                        "x": 2 * randn(2, LENGTH, WIDTH, dtype=torch.float32)},
            "mirrored": {"grad_out": torch.ones(4, dtype=torch.float64),
                         "x": torch.tensor([0.5, 1.5, -0.5, -1.5], dtype=torch.float64)},
        }
    if exercise_id == "linear_backward":
        def case(x_shape, out, dtype=torch.float64):
            return {"grad_out": randn(*x_shape[:-1], out, dtype=dtype), "x": randn(*x_shape, dtype=dtype),
                    "weight": randn(out, x_shape[-1], dtype=dtype)}

        return {
            "float64": case((2, LENGTH, WIDTH), 5),  # in = 4, out = 5
            "float32": case((2, LENGTH, WIDTH), 5, torch.float32),
            "square": case((2, LENGTH, WIDTH), WIDTH),  # in = out: a transposed dW keeps its shape
            "positions": case((6, WIDTH), 2),  # no batch axis
            "vector": case((WIDTH,), 3),  # no leading axis at all
            # on the meta device: every gradient keeps its inputs' device (one built on the CPU shows)
            "meta_device": {**case((2, LENGTH, WIDTH), 5), "meta": True},
        }
    if exercise_id == "residual_backward":
        return {
            "linear_branch": {"grad_out": randn(2, LENGTH, WIDTH), "matrix": randn(WIDTH, WIDTH)},
            "float32": {"grad_out": randn(2, LENGTH, WIDTH, dtype=torch.float32),
                        "matrix": randn(WIDTH, WIDTH, dtype=torch.float32)},
            "negation": {"grad_out": randn(2, LENGTH, WIDTH)},  # R(x) = -x: the two paths cancel
            "sine": {"grad_out": randn(2, LENGTH, WIDTH), "x": randn(2, LENGTH, WIDTH)},  # R(x) = sin(x)
        }
    if exercise_id == "feedforward_sublayer_backward":
        def case(hidden, dtype=torch.float64, batch=2, length=LENGTH):
            return {"grad_out": randn(batch, length, WIDTH, dtype=dtype), "u": 2 * randn(batch, length, WIDTH, dtype=dtype),
                    "ln.weight": 1 + 0.3 * randn(WIDTH, dtype=dtype), "ln.bias": 0.3 * randn(WIDTH, dtype=dtype),
                    "fc1.weight": 0.7 * randn(hidden, WIDTH, dtype=dtype), "fc1.bias": 0.3 * randn(hidden, dtype=dtype),
                    "fc2.weight": 0.7 * randn(WIDTH, hidden, dtype=dtype), "fc2.bias": 0.3 * randn(WIDTH, dtype=dtype)}

        return {
            "float64": case(HIDDEN),
            "float32": case(HIDDEN, torch.float32),
            "square": case(WIDTH),  # f = d: a transposed weight keeps its shape
            "one_position": case(HIDDEN, batch=1, length=1),
            # the body must read ln.eps (in z and in the call to layer_norm_backward): 1e-5 in its place shows
            "given_eps": {**case(HIDDEN), "ln.eps": 0.5},
        }
    raise KeyError(exercise_id)


# --- test doubles -------------------------------------------------------------
#
# Each is the correct backward of a function that is NOT the exercise's (student code runs in
# the same process and could call them; tests/test_catalogues.py proves none is a solution).


def rms_norm_backward(grad_out, x, weight, eps=1e-5):
    """Backward of RMSNorm y = x / sqrt(mean(x^2) + eps) * weight + bias: no centring, so not
    LayerNorm's backward (they agree only on inputs whose every row has mean 0)."""
    rms = torch.sqrt((x * x).mean(dim=-1, keepdim=True) + eps)
    xhat = x / rms
    g = grad_out * weight
    grad_x = (g - xhat * (g * xhat).mean(dim=-1, keepdim=True)) / rms
    width = x.shape[-1]
    return grad_x, (grad_out * xhat).reshape(-1, width).sum(dim=0), grad_out.reshape(-1, width).sum(dim=0)


def silu_backward(grad_out, x):
    """Backward of SiLU x * sigmoid(x): not GELU's."""
    s = torch.sigmoid(x)
    return grad_out * (s + x * s * (1 - s))


def doubled_linear_backward(grad_out, x, weight):
    """Backward of y = 2 x W^T + b: every weight path counted twice, the bias once."""
    flat_grad = grad_out.reshape(-1, grad_out.shape[-1])
    return 2 * (grad_out @ weight), 2 * (flat_grad.transpose(0, 1) @ x.reshape(-1, x.shape[-1])), flat_grad.sum(dim=0)


def doubled_branch_residual_backward(grad_out, branch_backward):
    """Backward of y = x + 2 R(x): the branch's upstream gradient is 2 * grad_out (called once), so
    its parameters' gradients double too, and a branch that ignores the gradient it is handed (and
    reads the sublayer's grad_out instead) shows."""
    return grad_out + branch_backward(2 * grad_out)


DOUBLES = {"layer_norm_backward": rms_norm_backward, "gelu_backward": silu_backward,
           "linear_backward": doubled_linear_backward, "residual_backward": doubled_branch_residual_backward}


class NormParameters(nn.Module):
    """What the sublayer reads of model.LayerNorm: weight, bias, eps (and a forward, should it call one)."""

    def __init__(self, weight, bias, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight, self.bias = nn.Parameter(weight.clone()), nn.Parameter(bias.clone())

    def forward(self, x):
        centered = x - x.mean(dim=-1, keepdim=True)
        return centered / torch.sqrt((centered * centered).mean(dim=-1, keepdim=True) + self.eps) * self.weight + self.bias


class FeedForwardParameters(nn.Module):
    """What the sublayer reads of model.FeedForward: fc1, activation, fc2, dropout (0)."""

    def __init__(self, case):
        super().__init__()
        self.fc1 = _linear(case["fc1.weight"], case["fc1.bias"])
        # torch's own exact GELU, which chapter 5 forbids: a double a student could copy as their
        # gelu loses there (a hand-written one here was chapter 5's reference body, issue 38)
        self.activation = nn.GELU()
        self.fc2 = _linear(case["fc2.weight"], case["fc2.bias"])
        self.dropout = nn.Dropout(0.0)

    def forward(self, x):
        return self.dropout(self.fc2(self.activation(self.fc1(x))))


def _linear(weight, bias):
    layer = nn.Linear(weight.shape[1], weight.shape[0], dtype=weight.dtype, device=weight.device)
    with torch.no_grad():
        layer.weight.copy_(weight)
        layer.bias.copy_(bias)
    return layer


@contextlib.contextmanager
def _doubles_in(module):
    """Run with the module-level backwards the sublayer calls replaced by the doubles."""
    missing = object()
    saved = {name: getattr(module, name, missing) for name in DOUBLES}
    for name, double in DOUBLES.items():
        setattr(module, name, double)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is missing:
                delattr(module, name)
            else:
                setattr(module, name, value)


# --- probes ----------------------------------------------------------------------


def run_case(module, exercise_id, case_name, case, device):
    """Outputs of one case.  `case` holds CPU tensors; they are moved to `device`."""
    case = {k: (v.to(device) if isinstance(v, torch.Tensor) else v) for k, v in case.items()}
    with torch.no_grad():
        if exercise_id == "layer_norm_backward":
            if "eps" in case:
                return module.layer_norm_backward(case["grad_out"], case["x"], case["weight"], case["eps"])
            return module.layer_norm_backward(case["grad_out"], case["x"], case["weight"])
        if exercise_id == "gelu_backward":
            return module.gelu_backward(case["grad_out"], case["x"])
        if exercise_id == "linear_backward":
            if case.get("meta"):
                return on_meta(lambda: module.linear_backward(*(case[k].to("meta") for k in ("grad_out", "x", "weight"))))
            return module.linear_backward(case["grad_out"], case["x"], case["weight"])
        if exercise_id == "residual_backward":
            # the docstring says call branch_backward exactly once: the count is part of the output
            calls = []
            branch = _branch(case_name, case)

            def counted_branch(grad):
                calls.append(None)
                return branch(grad)

            return module.residual_backward(case["grad_out"], counted_branch), len(calls)
        if exercise_id == "feedforward_sublayer_backward":
            ln = NormParameters(case["ln.weight"], case["ln.bias"], case.get("ln.eps", 1e-5)).to(device)
            ffn = FeedForwardParameters(case).to(device).eval()
            with _doubles_in(module):
                grad_u, grads = module.feedforward_sublayer_backward(case["grad_out"], case["u"], ln, ffn)
            if not isinstance(grads, dict):
                return grad_u, [None] * len(SUBLAYER_KEYS), type(grads).__name__
            return grad_u, [grads.get(name) for name in SUBLAYER_KEYS], sorted(str(key) for key in grads)
    raise KeyError(exercise_id)


def _branch(case_name, case):
    """The branch R's own backward, from the case: g -> g M (R(x) = x M^T), -g, or g cos(x)."""
    if case_name == "negation":
        return lambda g: -g
    if case_name == "sine":
        return lambda g: g * torch.cos(case["x"])
    return lambda g: g @ case["matrix"]

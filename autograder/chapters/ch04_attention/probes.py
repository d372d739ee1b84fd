"""What each chapter-4 exercise is asked to compute: cases, test doubles, probes.

A probe takes a model module (the student's, in the sandboxed worker; the reference, in the
grading process) and one case of inputs chosen by the grader, and returns plain outputs.  The
grader runs the same probe on the reference and compares.  Everything the exercise under test
needs besides itself is a test double built from torch primitives here: `attention` runs with
the module's `attention_scores` and `stable_softmax` replaced, the instance's `split_heads` and
`merge_heads` replaced, and a dropout whose mask is fixed by the case, so a bug in one exercise
never costs points in another (and CPU and CUDA draw the same mask).

This file imports only torch, the standard library and the grader's probes module
(autograd_gradients): the worker loads it inside the sandbox next to student code.
"""

import contextlib

import torch
from torch import nn

try:  # in the grader, a module of the autograder package
    from autograder.probes import autograd_gradients
except ImportError:  # in the worker, the grader's probes module next to it
    from probes import autograd_gradients

WIDTH, HEADS, CONTEXT = 4, 2, 6  # T = 3 != d = 4 != C = 6, so swapped axes and an unsliced mask show


def make_config(module, width=WIDTH, heads=HEADS, context=CONTEXT, dropout=0.0):
    return module.Config(vocab_size=10, block_size=context, d_model=width, n_heads=heads, n_layers=1,
                         d_ff=2 * width, dropout=dropout)


def make_cases(exercise_id):
    """Inputs for one exercise, identical on every run (fixed generator)."""
    gen = torch.Generator().manual_seed(20261204)

    def randn(*shape, dtype=torch.float32):
        return torch.randn(*shape, generator=gen, dtype=dtype)

    if exercise_id == "attention_scores":
        q, k = randn(2, 2, 3, 2), randn(2, 2, 3, 2)
        return {
            "heads": {"q": q, "k": k},
            # every feature written twice: q.k doubles and d_h doubles, so correct scores grow by sqrt(2)
            "heads_doubled": {"q": torch.cat([q, q], dim=-1), "k": torch.cat([k, k], dim=-1)},
            # one new query against five cached keys (T_q != T_k), as in a decode step
            "decode_step": {"q": randn(2, 3, 1, 4), "k": randn(2, 3, 5, 4)},
            "no_head_axis": {"q": randn(2, 3, 8), "k": randn(2, 5, 8)},
            "hand": {"q": torch.tensor([[1.0, 0.0, 1.0, 0.0], [0.0, 2.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0]]),
                     "k": torch.tensor([[2.0, 0.0, 0.0, 0.0], [0.0, 1.0, 1.0, 0.0], [1.0, 0.0, 1.0, 2.0]])},
            # autograd's gradients of <scores, upstream> for q and k: the scores are part of the trained model
            "gradients": {"q": q, "k": k, "upstream": randn(2, 2, 3, 3)},
        }
    if exercise_id == "stable_softmax":
        scores = 2 * randn(2, 2, 3, 5)
        causal = torch.ones(4, 4, dtype=torch.bool).tril()
        masked = (2 * randn(2, 1, 4, 4)).masked_fill(~causal, float("-inf"))
        return {
            "random": {"scores": scores},
            "shifted": {"scores": scores + 30.0},
            "masked": {"scores": masked},
            # float32 exp(100) is inf and exp(-1000) is 0: only a shifted softmax stays finite here
            "large": {"scores": torch.tensor([[100.0, 101.0, 102.0], [1000.0, 998.0, 999.0], [-1000.0, -999.0, -1001.0]])},
            "rows_apart": {"scores": torch.tensor([[300.0, 301.0, 299.0, 300.5], [-300.0, -301.0, -299.5, -300.0]])},
            "wide": {"scores": randn(3, 7)},
            "vector": {"scores": randn(5)},
            "float64": {"scores": randn(2, 4, dtype=torch.float64) * 3},  # float64 in, float64 out
            # the maximum, not any other score, is what keeps exp from overflowing: the first one is far below it
            "max_not_first": {"scores": torch.tensor([[0.0, 200.0, 199.0], [-150.0, 0.0, 1.0]])},
            "gradients": {"scores": scores, "upstream": randn(2, 2, 3, 5)},
        }
    if exercise_id in ("split_heads", "merge_heads"):
        def case(batch, length, width, heads, counting=False):
            x = torch.arange(batch * length * width, dtype=torch.float32).reshape(batch, length, width) if counting \
                else randn(batch, length, width)
            if exercise_id == "merge_heads":  # its input is split heads, made here with torch alone
                x = x.reshape(batch, length, heads, width // heads).permute(0, 2, 1, 3).contiguous()
            return {"x": x, "width": width, "heads": heads}

        return {
            "counting": case(2, 3, 4, 2, counting=True),
            "random": case(2, 3, 4, 2),
            "three_heads": case(1, 5, 6, 3),
            "one_head": case(2, 3, 4, 1),
            "square_heads": case(1, 4, 8, 2),  # d_h = 4 = T: a head transposed inside keeps its shape
            # autograd's gradient of <output, upstream> for x: the heads are part of the trained model
            "gradients": {**case(2, 3, 4, 2), "upstream": randn(*((2, 2, 3, 2) if exercise_id == "split_heads"
                                                                   else (2, 3, 4)))},
        }
    if exercise_id == "attention":
        return _attention_cases(randn)
    raise KeyError(exercise_id)


def _attention_cases(randn):
    x = randn(2, 3, WIDTH)
    weights = {"qkv": 0.7 * randn(3 * WIDTH, WIDTH), "proj": 0.7 * randn(WIDTH, WIDTH)}
    changed = x.clone()
    changed[:, -1] = randn(2, WIDTH)
    head_dim = WIDTH // HEADS
    past = {"past_k": randn(2, HEADS, 2, head_dim), "past_v": randn(2, HEADS, 2, head_dim)}
    wide = {"x": randn(1, 5, 6), "qkv": 0.5 * randn(18, 6), "proj": 0.5 * randn(6, 6), "width": 6, "heads": 3,
            "context": 8}
    return {
        "plain": {"x": x, **weights},
        "changed_future": {"x": changed, **weights},
        "cache": {"x": x, **weights},  # two positions with use_cache, then the third reading the cache
        "step_by_step": {"x": x, **weights},  # one position at a time
        "given_past": {"x": x[:, 1:], **weights, **past},
        "past_without_cache": {"x": x[:, 1:], **weights, **past},
        "window_mask": {"x": x[:, 1:], **weights, **past},  # the buffer replaced by a sliding window
        # the same window without a cache: its rows 0..T-1 differ from a fresh tril only in row 2, so a body
        # that builds its own mask shows here and one that slices the buffer from the top left does not
        "window_mask_full": {"x": x, **weights},
        "three_heads": wide,
        "three_heads_cache": wide,
        # dropout p = 0.3 on the weights, its kept entries fixed by the case (about 70%)
        "training": {"x": x, **weights, "keep": randn(2, HEADS, 3, 3) > -0.5},
        # how many times the forward calls self.attn_dropout (the text: one dropout, on the weights)
        "dropout_calls": {"x": x, **weights, "keep": torch.ones(2, HEADS, 3, 3, dtype=torch.bool)},
        # how many of the scores handed to stable_softmax are -inf (the text: fill with -inf, not a large
        # negative number, which gives the same weights here and uniform ones in a row with nothing allowed)
        "mask_value": {"x": x, **weights},
        # the forward is trained: autograd's gradients of <output, upstream> reach x, qkv and proj
        "gradients": {"x": x, **weights, "upstream": randn(2, 3, WIDTH)},
    }


# --- test doubles -------------------------------------------------------------


# The doubles are deliberately NOT solutions of the exercises they stand in for: student code
# runs in the same process as this module and could call them.  Each is a different, fixed
# function with the properties the probes rely on (one score per query-key pair, rows that
# sum to 1 with weight 0 where the score is -inf, a split that merge_double undoes), so the
# reference and the student's `forward` are compared on the same stand-ins.


def scores_double(q, k):
    """Half the raw dot product q.k (no 1/sqrt(d_h)): not attention_scores."""
    return 0.5 * torch.einsum("...id,...jd->...ij", q, k)


def softmax_double(scores):
    """A softmax at temperature 2, written out (no torch softmax): not stable_softmax."""
    shifted = (scores - scores.amax(dim=-1, keepdim=True)) / 2.0
    weights = torch.exp(shifted)
    return weights / weights.sum(dim=-1, keepdim=True)


def make_split_double(heads):
    """Heads split as split_heads does, then listed in reverse order: not split_heads."""
    def split(t):
        batch, length, width = t.shape
        return t.reshape(batch, length, heads, width // heads).permute(0, 2, 1, 3).flip(1)
    return split


def merge_double(t):
    """Heads put back in order, then merged: the inverse of the split double, not merge_heads."""
    batch, heads, length, head_dim = t.flip(1).shape
    return t.flip(1).permute(0, 2, 1, 3).reshape(batch, length, heads * head_dim)


class FixedDropout(nn.Module):
    """Dropout whose kept entries are given (the same on every device): in training mode it
    keeps the entries of `keep` and scales them by 1/(1-p); in evaluation mode it is the identity.
    Applied to a tensor of another shape than `keep`, it scales everything by 3 (still visible)."""

    def __init__(self, keep, p=0.3):
        super().__init__()
        self.keep, self.p = keep, p
        self.calls = 0

    def forward(self, t):
        self.calls += 1
        if not self.training:
            return t
        if t.shape != self.keep.shape:
            return 3.0 * t
        return torch.where(self.keep, t / (1 - self.p), torch.zeros_like(t))


@contextlib.contextmanager
def _doubles_in(module):
    """Run with the module-level `attention_scores` and `stable_softmax` replaced by doubles."""
    missing = object()
    saved = {name: getattr(module, name, missing) for name in ("attention_scores", "stable_softmax")}
    module.attention_scores, module.stable_softmax = scores_double, softmax_double
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
    if case_name == "gradients" and exercise_id == "attention":
        with _doubles_in(module):
            return _attention_gradients(module, case, device)
    if case_name == "gradients":
        return _gradients(module, exercise_id, case, device)
    with torch.no_grad():
        if exercise_id == "attention_scores":
            return module.attention_scores(case["q"], case["k"])
        if exercise_id == "stable_softmax":
            return module.stable_softmax(case["scores"])
        if exercise_id in ("split_heads", "merge_heads"):
            attention = module.CausalSelfAttention(make_config(module, case["width"], case["heads"])).to(device)
            method = attention.split_heads if exercise_id == "split_heads" else attention.merge_heads
            return method(case["x"])
        if exercise_id == "attention":
            with _doubles_in(module):
                return _run_attention(module, case_name, case, device)
    raise KeyError(exercise_id)


def _gradients(module, exercise_id, case, device):
    """((input, autograd's gradient of <output, upstream> for it)...), None where none reaches it."""
    names = {"attention_scores": ("q", "k"), "stable_softmax": ("scores",)}.get(exercise_id, ("x",))
    if exercise_id in ("split_heads", "merge_heads"):
        attention = module.CausalSelfAttention(make_config(module, case["width"], case["heads"])).to(device)
        forward = getattr(attention, exercise_id)
    else:
        forward = getattr(module, exercise_id)
    return autograd_gradients(forward, {name: case[name] for name in names}, case["upstream"])


def _attention_gradients(module, case, device):
    """(("x", gradient), ("qkv.weight", gradient), ("proj.weight", gradient)) on the stand-ins."""
    with torch.no_grad():
        attention = _attention(module, case, device)

    def output(x):
        out = attention(x)
        return out[0] if isinstance(out, tuple) and out else out

    return autograd_gradients(output, {"x": case["x"]}, case["upstream"],
                              {"qkv.weight": attention.qkv.weight, "proj.weight": attention.proj.weight})


def _attention(module, case, device, dropout=0.0):
    width, heads = case.get("width", WIDTH), case.get("heads", HEADS)
    attention = module.CausalSelfAttention(make_config(module, width, heads, case.get("context", CONTEXT), dropout))
    attention = attention.to(device).eval()
    attention.qkv.weight.copy_(case["qkv"])
    attention.proj.weight.copy_(case["proj"])
    attention.split_heads, attention.merge_heads = make_split_double(heads), merge_double
    return attention


def _run_attention(module, case_name, case, device):
    x = case["x"]
    attention = _attention(module, case, device)
    if case_name in ("plain", "changed_future", "three_heads"):
        return attention(x)
    if case_name in ("cache", "three_heads_cache"):
        head, present = attention(x[:, :2], None, True)
        tail, present = attention(x[:, 2:], present, True)
        return torch.cat([head, tail], dim=1), present
    if case_name == "step_by_step":
        outputs, present = [], None
        for position in range(x.shape[1]):
            out, present = attention(x[:, position : position + 1], present, True)
            outputs.append(out)
        return torch.cat(outputs, dim=1), present
    past = (case["past_k"], case["past_v"]) if "past_k" in case else None
    if case_name == "given_past":
        return attention(x, past, True)
    if case_name == "past_without_cache":
        return attention(x, past, False)
    if case_name in ("window_mask", "window_mask_full"):
        # each position sees itself and the one before: right only if the rows total-T..total-1 are read
        band = torch.ones(CONTEXT, CONTEXT, dtype=torch.bool, device=device).tril() & \
            torch.ones(CONTEXT, CONTEXT, dtype=torch.bool, device=device).triu(-1)
        attention.causal_mask = band
        return attention(x, past, True)
    if case_name == "mask_value":
        seen = []

        def counting_softmax(scores):
            seen.append(int(torch.isneginf(scores).sum()))
            return softmax_double(scores)
        module.stable_softmax = counting_softmax  # _doubles_in puts the module's own back
        attention(x)
        return (("-inf entries among the scores given to stable_softmax", sum(seen)),)
    if case_name in ("training", "dropout_calls"):
        dropout = FixedDropout(case["keep"]).to(device)
        attention.attn_dropout = dropout
        attention.train()
        out = attention(x)
        return dropout.calls if case_name == "dropout_calls" else out
    raise KeyError(case_name)

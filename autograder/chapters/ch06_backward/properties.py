"""Checks that hold for any correct chapter-6 implementation, judged on the student's CPU
outputs in the grading process (where autograd is allowed): every float64 gradient agrees with
autograd's at gradcheck-level tolerance; LayerNorm's input gradient sums to 0 over the features
(shift invariance) and meets xhat only through eps (scale); GELU's slopes satisfy
g'(u) + g'(-u) = 1; the linear layer's gradients have their parameters' shapes; the residual's
gradient cancels exactly for R(x) = -x, and it calls branch_backward exactly once (the
docstring's rule; the probe counts the calls); the sublayer returns the six named parameter
gradients with their parameters' shapes.

`check(exercise_id, outputs, cases, reference, judges)` returns (name, problem) pairs; a problem is
a (zh, en) pair or None.  The judges are the visible checks' own
(hero_transformer/backward_checks.py): one check, two front ends.
"""

import torch

from autograder.reference import load

JUDGES = load("backward_checks")
FLOAT64 = {"layer_norm_backward": ("float64", "shifted", "constant", "small_variance", "vector", "given_eps"),
           "gelu_backward": ("float64", "mirrored"),
           "linear_backward": ("float64", "square", "positions", "vector")}


def _triple(value):
    return isinstance(value, (tuple, list)) and len(value) == 3


def _first_problem(problems):
    return next((problem for problem in problems if problem), None)


def _branch_calls_problem(counts):
    """The docstring's rule of how: branch_backward is called exactly once per residual_backward."""
    wrong = next((count for count in counts if count != 1), None)
    if wrong is None:
        return None
    return (f"residual_backward 必须恰好调用一次 branch_backward；你的代码调用了 {wrong} 次。",
            f"residual_backward must call branch_backward exactly once; yours called it {wrong} times.")


def check(exercise_id, out, cases, reference, judges):
    judges = JUDGES
    found = []
    if exercise_id == "layer_norm_backward":
        problems = []
        for name in FLOAT64[exercise_id]:
            if name not in out:
                continue
            case = cases[name]
            expected = judges.autograd_layer_norm(case["grad_out"], case["x"], case["weight"], case.get("eps", 1e-5))
            got = out[name] if _triple(out[name]) else (out[name], None, None)
            problems += [judges.judge_matches_autograd(mine, theirs, label)
                         for mine, theirs, label in zip(got, expected, ("grad_x", "grad_weight", "grad_bias"))]
        found.append(("agrees with autograd in float64", _first_problem(problems)))
        grads = {name: out[name][0] for name in ("float64", "small_variance") if name in out and _triple(out[name])}
        if grads:
            found.append(("grad_x sums to 0 over the features (shift invariance)",
                          _first_problem(judges.judge_rows_sum_to_zero(g) for g in grads.values())))
            found.append(("<grad_x, xhat> is the eps term alone (scale)", _first_problem(
                judges.judge_scale_direction(g, cases[n]["grad_out"], cases[n]["x"], cases[n]["weight"], 1e-5)
                for n, g in grads.items())))
    if exercise_id == "gelu_backward":
        problems = [judges.judge_matches_autograd(out[name], judges.autograd_gelu(cases[name]["grad_out"],
                                                                                  cases[name]["x"]), "grad_x")
                    for name in FLOAT64[exercise_id] if name in out]
        found.append(("agrees with autograd in float64", _first_problem(problems)))
        mirrored = out.get("mirrored")
        if isinstance(mirrored, torch.Tensor) and mirrored.shape == (4,):
            found.append(("g'(u) + g'(-u) = 1", judges.judge_gelu_slope_symmetry(mirrored[:2], mirrored[2:])))
    if exercise_id == "linear_backward":
        problems, shapes = [], []
        for name in FLOAT64[exercise_id]:
            if name not in out:
                continue
            case = cases[name]
            got = out[name] if _triple(out[name]) else (out[name], None, None)
            expected = judges.autograd_linear(case["grad_out"], case["x"], case["weight"])
            problems += [judges.judge_matches_autograd(mine, theirs, label)
                         for mine, theirs, label in zip(got, expected, ("grad_x", "grad_weight", "grad_bias"))]
            shapes.append(judges.judge_parameter_shapes({"grad_weight": got[1], "grad_bias": got[2]},
                                                        {"grad_weight": case["weight"].shape,
                                                         "grad_bias": case["weight"].shape[:1]}))
        found.append(("agrees with autograd in float64", _first_problem(problems)))
        found.append(("gradients have their parameters' shapes", _first_problem(shapes)))
    if exercise_id == "residual_backward":
        # each output is (gradient, how many times the body called branch_backward)
        grads = {name: value[0] for name, value in out.items() if isinstance(value, tuple) and len(value) == 2}
        if "negation" in grads:
            found.append(("R(x) = -x cancels to exactly 0", judges.judge_cancellation(grads["negation"])))
        if "sine" in grads:
            case = cases["sine"]
            x = case["x"].clone().requires_grad_()
            with torch.enable_grad():
                expected = torch.autograd.grad(x + torch.sin(x), x, case["grad_out"])[0]
            found.append(("agrees with autograd in float64", judges.judge_matches_autograd(grads["sine"], expected,
                                                                                            "grad_x")))
        counts = [value[1] for value in out.values() if isinstance(value, tuple) and len(value) == 2]
        if counts:
            found.append(("calls branch_backward exactly once", _branch_calls_problem(counts)))
    if exercise_id == "feedforward_sublayer_backward":
        keys, shapes = [], []
        for name, value in out.items():
            if not (isinstance(value, (tuple, list)) and len(value) == 3):
                continue
            case = cases[name]
            keys.append(judges.judge_keys(value[2] if isinstance(value[2], list) else [value[2]]))
            got = dict(zip(judges.SUBLAYER_KEYS, value[1] if isinstance(value[1], (tuple, list)) else []))
            got["grad_u"] = value[0]
            expected = {key: case[key].shape for key in judges.SUBLAYER_KEYS}
            expected["grad_u"] = case["u"].shape
            shapes.append(judges.judge_parameter_shapes(got, expected))
        if keys:
            found.append(("grads has exactly the six keys", _first_problem(keys)))
            found.append(("every gradient has its parameter's shape", _first_problem(shapes)))
    return found

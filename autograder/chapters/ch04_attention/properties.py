"""Checks that hold for any correct chapter-4 implementation, judged on the student's CPU
outputs: the shape and the sqrt(d_h) scaling of the scores; rows summing to 1, shift invariance
and finite values of the softmax; heads split and merged in the right order; causality, the
incremental decode equal to the full forward and the cache's shapes for attention.

`check(exercise_id, outputs, cases, reference, judges)` returns (name, problem) pairs; a problem is
a (zh, en) pair or None.  The judges are the visible checks' own
(hero_transformer/attention_checks.py): one check, two front ends.
"""

import torch

from autograder.reference import load

JUDGES = load("attention_checks")


def check(exercise_id, out, cases, reference, judges):
    judges = JUDGES
    tensor = lambda *names: all(isinstance(out.get(n), torch.Tensor) for n in names)  # noqa: E731
    found = []
    if exercise_id == "attention_scores":
        if tensor("decode_step"):
            case = cases["decode_step"]
            found.append(("scores are [..., T_q, T_k]", judges.judge_scores_shape(case["q"], case["k"], out["decode_step"])))
        if tensor("heads", "heads_doubled"):
            found.append(("scaled by 1/sqrt(d_h)", judges.judge_scores_scaling(out["heads"], out["heads_doubled"])))
    if exercise_id == "stable_softmax":
        if tensor("random"):
            found.append(("rows sum to 1", judges.judge_rows_sum_to_one(out["random"])))
        if tensor("random", "shifted"):
            found.append(("shift invariant", judges.judge_shift_invariant(out["random"], out["shifted"])))
        if tensor("large"):
            found.append(("finite on large scores", judges.judge_finite(out["large"])))
    if exercise_id == "split_heads" and tensor("counting"):
        case = cases["counting"]
        found.append(("head j holds its own features", judges.judge_split(case["x"], case["heads"], out["counting"])))
    if exercise_id == "merge_heads" and tensor("counting"):
        found.append(("merge undoes the split", judges.judge_merge(cases["counting"]["x"],
                                                                   out["counting"])))
    if exercise_id == "attention":
        found += _attention(out, cases, judges)
    return found


def _first(value):
    return value[0] if isinstance(value, (tuple, list)) and value else value


def _attention(out, cases, judges):
    found = []
    plain, changed = _first(out.get("plain")), _first(out.get("changed_future"))
    if isinstance(plain, torch.Tensor) and isinstance(changed, torch.Tensor) and plain.shape == changed.shape:
        found.append(("causal: the future does not change the past", judges.judge_causal(plain, changed, 2)))
    pairs = [("plain", "cache"), ("plain", "step_by_step"), ("three_heads", "three_heads_cache")]
    problems = [judges.judge_incremental(_first(out[full]), _first(out[pieces]))
                for full, pieces in pairs if full in out and pieces in out]
    if problems:
        found.append(("the incremental decode equals the full forward", next((p for p in problems if p), None)))
    nones = [judges.judge_present(out[name][1] if isinstance(out[name], (tuple, list)) and len(out[name]) == 2
                                  else "no (out, present) pair", False)
             for name in ("plain", "past_without_cache") if name in out]
    if nones:
        found.append(("present is None without use_cache", next((p for p in nones if p), None)))
    if "given_past" in out:
        given = out["given_past"]
        case = cases["given_past"]
        batch, heads, past, head_dim = case["past_k"].shape
        present = given[1] if isinstance(given, (tuple, list)) and len(given) == 2 else None
        found.append(("present holds the past and the new keys and values",
                      judges.judge_present(present, True, batch, heads, past + case["x"].shape[1], head_dim)))
    return found

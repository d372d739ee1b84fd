"""Checks that hold for any correct chapter-4 implementation, judged on the student's CPU
outputs: the shape and the sqrt(d_h) scaling of the scores; rows summing to 1, shift invariance
and finite values of the softmax; heads split and merged in the right order; causality, the
incremental decode equal to the full forward, the cache's shapes, the mask read from the registered
buffer and self.attn_dropout called once for attention.

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
    window = _first(out.get("window_mask_full"))
    if isinstance(plain, torch.Tensor) and isinstance(window, torch.Tensor) and plain.shape == window.shape:
        # the same inputs as plain, only the buffer swapped for a sliding window: a body that reads the
        # buffer gives another last position, one with a mask of its own gives plain's output again
        ignored = torch.allclose(window, plain, rtol=1e-4, atol=1e-5)
        found.append(("the mask is read from self.causal_mask", (
            "掩码必须取自注册好的缓冲区 self.causal_mask：评分器把缓冲区换成了滑动窗口掩码，你的输出却完全没变，"
            "说明代码没有读这个缓冲区（自己用 torch.tril 之类另建了掩码，或者没有掩码）。",
            "the mask must be read from the registered buffer self.causal_mask: the grader replaced the buffer "
            "by a sliding-window mask and your output did not change at all, so your code does not read the "
            "buffer (it builds a mask of its own, with torch.tril or the like, or uses none).") if ignored else None))
    calls = out.get("dropout_calls")
    if type(calls) is int:
        found.append(("self.attn_dropout is called once", None if calls == 1 else (
            f"注意力里只有一处 dropout：forward 每次应恰好调用一次 self.attn_dropout（作用在 softmax 之后的权重上）；"
            f"你的代码调用了 {calls} 次。",
            f"attention has one dropout only: forward must call self.attn_dropout exactly once (on the weights "
            f"after the softmax); yours called it {calls} times.")))
    return found

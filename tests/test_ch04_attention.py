"""Chapter 4's own figures: the answers worked out a second way, no graded value written in the
student's notebook or earned by copying one from it, every known mistake named, and the facts
the probes and the walkthrough stand on (the test doubles are stand-ins, not solutions; the incremental
decode equals the full forward, the dropout and window-mask cases really test something)."""

import math
import subprocess
import sys

import pytest
import torch

from autograder import engine, registry
from autograder.chapters.ch04_attention import probes as chapter_probes
from autograder.reference import load

from conftest import SAMPLE_ROOTS

CHAPTER = registry.ASSIGNMENTS["ch04_attention"]
model = load("model")
checks = load("attention_checks")


# --- the answers, a second way -------------------------------------------------------


def _softmax(row):
    top = max(row)
    exps = [math.exp(s - top) for s in row]
    return [e / sum(exps) for e in exps]


def _second_example(divisor=math.sqrt(2), masked=True):
    q = [(1, 0), (2, 1), (0, 3)]
    k = [(1, 1), (0, 2), (3, 0)]
    scores = [[sum(a * b for a, b in zip(qi, kj)) / divisor for kj in k] for qi in q]
    if masked:
        scores = [[s if j <= i else -math.inf for j, s in enumerate(row)] for i, row in enumerate(scores)]
    return [_softmax(row) for row in scores]


def test_the_answers_are_what_their_questions_ask():
    approx = pytest.approx
    weights = _second_example()
    assert engine.expected_answer("attn_row_weights") == approx(weights[2], abs=1e-12)
    v = [(1, 2), (0, 1), (4, 0)]
    out_row = [sum(w * v[j][c] for j, w in enumerate(weights[1])) for c in range(2)]
    assert engine.expected_answer("attn_output_row") == approx(out_row, abs=1e-12)
    # row 1 sees tokens 0 and 1: softmax(3/sqrt2, 2/sqrt2) on (1, 2) and (0, 1)
    a = 1 / (1 + math.exp(-1 / math.sqrt(2)))
    assert out_row == approx([a, 2 * a + (1 - a)], abs=1e-12)
    assert engine.expected_answer("attn_masked_count") == 2 * 3 * (7 * 6 // 2) == 126
    assert engine.expected_answer("attn_shape_drill") == {
        "qkv_weight": [36, 12], "qkv_out": [3, 5, 36], "per_head_q": [3, 3, 5, 4], "scores": [3, 3, 5, 5],
        "causal_mask": [16, 16], "merged": [3, 5, 12]}
    assert engine.expected_answer("kv_cache_shapes") == {
        "present_key": [2, 4, 9, 8], "last_query": [2, 4, 1, 8], "last_scores": [2, 4, 1, 9], "last_mask_slice": [1, 9]}
    # float32's largest value is about 3.4e38; ln of it lies between 88 and 89
    largest = torch.finfo(torch.float32).max
    assert math.floor(math.log(largest)) == engine.expected_answer("exp_overflow_limit") == 88


# --- no graded value in the student's notebook ------------------------------------------------


def test_every_answer_has_a_known_mistake_and_one_point():
    assert 5 <= len(CHAPTER.answers) <= 9 and all(answer.mistakes for answer in CHAPTER.answers)
    points = CHAPTER.points()
    assert all(points[answer.id] == 1 for answer in CHAPTER.answers)
    assert all(2 <= points[exercise.id] <= 3 for exercise in CHAPTER.exercises)


# --- what the probes and the walkthrough stand on --------------------------------------------


def test_the_test_doubles_are_stand_ins_not_solutions():
    """Student code shares the worker with the probes, so no double may be a correct body of the
    exercise it stands in for; each keeps what the attention probe relies on."""
    torch.manual_seed(1)
    q, k = torch.randn(2, 3, 4, 5), torch.randn(2, 3, 6, 5)
    assert not torch.allclose(chapter_probes.scores_double(q, k), model.attention_scores(q, k), atol=1e-3)
    scores = (5 * torch.randn(2, 3, 4, 6)).masked_fill(torch.ones(4, 6, dtype=torch.bool).triu(1), float("-inf"))
    weights = chapter_probes.softmax_double(scores)
    assert not torch.allclose(weights, model.stable_softmax(scores), atol=1e-3)
    assert torch.allclose(weights.sum(-1), torch.ones(2, 3, 4)) and bool((weights[scores == float("-inf")] == 0).all())
    attention = model.CausalSelfAttention(model.Config(10, 6, 6, 3, 1, 8, 0.0))
    x = torch.randn(2, 4, 6)
    split = chapter_probes.make_split_double(3)(x)
    assert split.shape == attention.split_heads(x).shape and not torch.equal(split, attention.split_heads(x))
    assert not torch.equal(chapter_probes.merge_double(split), attention.merge_heads(split))
    assert torch.equal(chapter_probes.merge_double(split), x)  # the merge double undoes the split double


def _reference_outputs(exercise_id):
    cases = chapter_probes.make_cases(exercise_id)
    return cases, {name: chapter_probes.run_case(model, exercise_id, name, case, "cpu") for name, case in cases.items()}


def test_the_attention_cases_test_what_they_claim():
    cases, out = _reference_outputs("attention")
    full = out["plain"][0]
    # the incremental decodes equal the full forward within the course's tolerance
    assert torch.allclose(out["cache"][0], full, rtol=1e-4, atol=1e-5)
    assert torch.allclose(out["step_by_step"][0], full, rtol=1e-4, atol=1e-5)
    assert torch.allclose(out["three_heads_cache"][0], out["three_heads"][0], rtol=1e-4, atol=1e-5)
    # causality: the last position changed, the first two outputs did not move
    assert torch.allclose(out["changed_future"][0][:, :2], full[:, :2], atol=1e-6)
    assert not torch.allclose(out["changed_future"][0][:, 2], full[:, 2])
    # the sliding-window buffer and the fixed dropout change the outputs, so those cases test something
    assert not torch.allclose(out["window_mask"][0], out["given_past"][0])
    assert not torch.allclose(out["training"][0], full)
    assert out["plain"][1] is None and out["past_without_cache"][1] is None
    assert [tuple(t.shape) for t in out["given_past"][1]] == [(2, 2, 4, 2)] * 2


def test_the_softmax_cases_overflow_without_the_shift():
    cases, out = _reference_outputs("stable_softmax")
    for name in ("large", "rows_apart"):
        scores = cases[name]["scores"]
        naive = torch.exp(scores) / torch.exp(scores).sum(dim=-1, keepdim=True)
        assert torch.isnan(naive).any() and torch.isfinite(out[name]).all()
    masked = cases["masked"]["scores"]
    assert (out["masked"][torch.isinf(masked)] == 0).all()


def test_the_reference_decodes_incrementally_like_the_full_forward():
    """A model-sized check: C = 16, d = 32, h = 4, a prompt then one token at a time."""
    torch.manual_seed(0)
    attention = model.CausalSelfAttention(model.Config(10, 16, 32, 4, 1, 64, 0.0)).eval()
    x = torch.randn(2, 11, 32)
    with torch.no_grad():
        full, _ = attention(x)
        head, present = attention(x[:, :6], None, True)
        pieces = [head]
        for t in range(6, 11):
            out, present = attention(x[:, t:t + 1], present, True)
            pieces.append(out)
    assert torch.allclose(torch.cat(pieces, dim=1), full, rtol=1e-4, atol=1e-5)
    assert present[0].shape == (2, 4, 11, 8)


def test_the_walkthrough_figures():
    e = math.e
    assert (1 / (1 + e), e / (1 + e)) == pytest.approx((0.268941, 0.731059), abs=1e-6)
    assert (1 / (2 + e), e / (2 + e)) == pytest.approx((0.211942, 0.576117), abs=1e-6)
    assert 2 / (2 + e) + e / (2 + e) == pytest.approx(1.0)
    assert torch.isinf(torch.exp(torch.tensor(100.0))) and math.isfinite(math.exp(100.0))
    assert checks.judge_finite(model.stable_softmax(torch.tensor([100.0, 101.0, 102.0]))) is None


def _sample(name):
    if CHAPTER.id not in SAMPLE_ROOTS:
        pytest.skip("HERO_TEST_ASSIGNMENTS leaves ch04_attention out")
    return SAMPLE_ROOTS[CHAPTER.id] / name


def test_visible_checks_answer_a_stub_in_one_line_and_let_run_all_go_on():
    code = ("from hero_transformer import attention_checks, checks\n"
            "for name in ('check_attention_scores', 'check_stable_softmax', 'check_split_heads', "
            "'check_merge_heads', 'check_attention'):\n"
            "    getattr(attention_checks, name)()\n"
            "checks.answered('attn_row_weights', ...)\n")
    stubs = _sample("stubs")
    done = subprocess.run([sys.executable, "-c", code], cwd=stubs, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    for exercise in ("attention_scores", "stable_softmax", "split_heads", "merge_heads", "attention"):
        assert f"尚未实现：练习 {exercise} 还是 raise NotImplementedError('{exercise}')" in done.stderr
    assert "尚未作答" in done.stderr and "Traceback" not in done.stderr and "✓" not in done.stdout


def test_visible_checks_pass_on_the_reference_and_print_one_tick_each():
    code = ("from hero_transformer import attention_checks\n"
            "for name in ('check_attention_scores', 'check_stable_softmax', 'check_split_heads', "
            "'check_merge_heads', 'check_attention'):\n"
            "    getattr(attention_checks, name)()\n")
    reference = _sample("reference")
    done = subprocess.run([sys.executable, "-c", code], cwd=reference, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("✓") == 5 and not done.stderr

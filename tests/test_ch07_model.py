"""Chapter 7's own figures: the answers worked out a second way, no graded value written in the
student's notebook or earned by copying one from it, every known mistake named, and the facts
the probes and the walkthrough stand on (the test doubles are stand-ins, not solutions; each
gradient question flags only its own broken setup; the ledger catches a reused block; the loss at
step 0 is close to ln V; the visible checks catch the known faults and pass correct variants)."""

import json
import math
import re
import subprocess
import sys

import pytest
import torch
from torch import nn

from autograder import engine, probes, reference, registry
from autograder.chapters.ch07_model import probes as chapter_probes
from autograder.reference import load

from conftest import SAMPLE_ROOTS

CHAPTER = registry.ASSIGNMENTS["ch07_model"]
RELEASED = registry.REPO_ROOT / registry.RELEASE_DIR / CHAPTER.id / CHAPTER.notebook_name
model, audit, judges = load("model"), load("audit"), load("model_checks")


# --- the answers, a second way -------------------------------------------------------


def test_the_answers_are_what_their_questions_ask():
    approx = pytest.approx
    assert engine.expected_answer("uniform_loss") == approx(math.log(500), abs=1e-12)
    assert engine.expected_answer("residual_init_std") == approx(0.02 / math.sqrt(2 * 6), abs=1e-15)
    assert engine.expected_answer("init_logit_std") == approx(0.02 * math.sqrt(96), abs=1e-15)
    per_block = 4 * 16 * 16 + 2 * 16 * 64 + 64 + 5 * 16
    assert engine.expected_answer("reused_block_gap") == 3 * per_block == 9648
    assert engine.expected_answer("kv_cache_floats") == 3 * 2 * (2 * (6 + 3) * 32) == 3456
    assert engine.expected_answer("audit_flags") == {"frozen": ["lookup.weight"], "unreached": ["extra.weight", "extra.bias"],
                                                     "unoptimized": ["out.weight"]}


# --- no graded value is written in the student's notebook, or earned by copying one ------------

NUMBER = r"-?\d+(?:,\d{3})*(?:\.\d+)?(?:e-?\d+)?"


def _released_text():
    cells = json.loads(RELEASED.read_text(encoding="utf-8"))["cells"]
    return "\n".join("".join(cell["source"]) for cell in cells)


def _expected_texts(value):
    if isinstance(value, dict):
        return {text for item in value.values() for text in _expected_texts(item)} | {json.dumps(value), repr(value)}
    if isinstance(value, list):
        if all(isinstance(v, str) for v in value):
            return {repr(value), json.dumps(value, ensure_ascii=False)}
        return {text for item in value for text in _expected_texts(item)}
    if isinstance(value, int):
        return {str(value), f"{value:,}", f"{value:,}".replace(",", "{,}")}
    return {f"{value:.{digits}f}" for digits in range(3, 8)}


def _judge(answer, value):
    body = {"values": {answer.variable: {"ok": probes.encode(value)}}, "cell_failures": []}
    reply = {"status": "ok", "payload": {"body": body}, "output_tail": ""}
    return engine.judge_answer(answer, 1.0, reply, None)


@pytest.mark.parametrize("answer", CHAPTER.answers, ids=lambda a: a.id)
def test_no_expected_value_is_written_in_the_student_notebook(answer):
    text = _released_text()
    found = sorted(t for t in _expected_texts(engine.expected_answer(answer.id)) if t in text)
    assert not found, f"{answer.id}: the released notebook shows {found}"


@pytest.mark.parametrize("answer", CHAPTER.answers, ids=lambda a: a.id)
def test_no_number_of_the_notebook_earns_an_answer(answer):
    numbers = {float(m.replace(",", "")) for m in re.findall(NUMBER, _released_text())}
    numbers |= {int(n) for n in numbers if n.is_integer()}
    assert len(numbers) > 30
    earned = [n for n in numbers if _judge(answer, n).status == "passed"]
    assert not earned, f"{answer.id} is earned by copying {earned[:3]}"


@pytest.mark.parametrize("answer", CHAPTER.answers, ids=lambda a: a.id)
def test_each_mistake_differs_from_the_answer_and_is_named(answer):
    assert 1 <= len(answer.mistakes) <= 3
    assert _judge(answer, engine.expected_answer(answer.id)).status == "passed"
    for mistake in answer.mistakes:
        value = mistake.value(reference.load(answer.module))
        assert engine._answer_problem(answer, value, engine.expected_answer(answer.id)) is not None
        result = _judge(answer, value)
        assert result.status == "failed"
        assert mistake.zh in result.feedback_zh and mistake.en in result.feedback_en, result.feedback_en


def test_points_and_ids():
    assert 5 <= len(CHAPTER.answers) <= 9
    points = CHAPTER.points()
    assert all(points[answer.id] == 1 for answer in CHAPTER.answers)
    assert {e.id: points[e.id] for e in CHAPTER.exercises} == {
        "model_forward": 3, "init_weights": 3, "frozen_parameters": 2, "unreached_parameters": 2,
        "unoptimized_parameters": 2, "ledger_gap": 2}
    assert {e.module for e in CHAPTER.exercises} == {"model", "audit"}


# --- what the probes stand on ---------------------------------------------------------------


def _outputs(exercise_id, module):
    cases = chapter_probes.make_cases(exercise_id)
    return {name: chapter_probes.run_case(module, exercise_id, name, case, "cpu") for name, case in cases.items()}


def test_the_test_doubles_are_stand_ins_not_solutions():
    embeddings, positions = load("embeddings"), load("positions")
    ids, table = torch.tensor([[1, 4, 0], [2, 2, 3]]), torch.randn(6, 4)
    assert not torch.allclose(chapter_probes.embed_double(ids, table), embeddings.embed(ids, table))
    x = torch.randn(2, 3, 4)
    assert not torch.allclose(chapter_probes.positions_double(x, table, start=2), positions.add_positions(x, table, 2))
    with pytest.raises(ValueError):
        chapter_probes.positions_double(x, table, start=4)
    drawn = chapter_probes.uniform_init_double(torch.zeros(64, 64), std=0.5, generator=torch.Generator().manual_seed(0))
    normal = embeddings.init_normal_(torch.zeros(64, 64), std=0.5, generator=torch.Generator().manual_seed(0))
    assert drawn.abs().max() <= 0.5 * math.sqrt(3) and not torch.allclose(drawn, normal)
    assert abs(drawn.std().item() - 0.5) < 0.02  # the same scale, another distribution
    assert chapter_probes.ledger_double(32, 64, 2, 64, 256) != model.parameter_count(32, 64, 2, 64, 256)


def test_the_forward_cases_test_what_they_claim():
    out = _outputs("model_forward", model)
    assert out["plain"][0] == "LMOutput" and out["plain"][2] is None and out["plain"][3] is None
    # the cached decode equals the full forward, and each layer's cache holds its own inputs
    assert torch.allclose(out["cache"][1], out["full"][1], rtol=1e-4, atol=1e-5)
    assert len(out["cache"][3]) == chapter_probes.LAYERS
    assert len({tuple(present[0].flatten().tolist()) for present in out["cache"][3]}) == chapter_probes.LAYERS
    assert out["too_long"] == out["too_long_after_past"] == "raised ValueError"
    # a given cache changes the outputs: positions start after it and each layer reads its entry
    assert not torch.allclose(out["given_past"][1], out["full"][1][:, :2])
    assert out["past_without_cache"][3] is None and len(out["given_past"][3]) == chapter_probes.LAYERS


def test_each_gradient_question_flags_only_its_own_setup():
    flags = {question: _outputs(question, audit)
             for question in ("frozen_parameters", "unreached_parameters", "unoptimized_parameters")}
    own = {"frozen": "frozen_parameters", "frozen_still_held": "frozen_parameters", "unreached": "unreached_parameters",
           "zero_gradient": "unreached_parameters", "unoptimized": "unoptimized_parameters",
           "equal_values_left_out": "unoptimized_parameters"}
    for setup, question in own.items():
        assert flags[question][setup], (setup, question)
        assert all(flags[other][setup] == [] for other in flags if other != question), setup
    assert all(flags[q]["sound"] == [] and flags[q]["two_groups"] == [] for q in flags)
    assert all(flags[q]["everything_at_once"] for q in flags)


def test_the_ledger_catches_a_reused_block():
    out = _outputs("ledger_gap", audit)
    assert out["sound"] == out["frozen"] == out["one_layer_reused"] == 0
    assert out["reused"] == 2 * (4 * 6 + 6) and out["extra"] == -(4 * 2 + 2)
    cfg = model.Config(32, 64, 64, 4, 2, 256, 0.0)
    lm = model.TransformerLM(cfg)
    assert audit.ledger_gap(lm) == 0
    lm.blocks = nn.ModuleList([lm.blocks[0]] * 2)
    assert audit.ledger_gap(lm) == 49_728


# --- the walkthrough's figures -------------------------------------------------------------


def test_the_initial_loss_is_close_to_ln_v_and_init_is_deterministic():
    cfg = model.Config(32, 64, 64, 4, 2, 256, 0.0)
    lm = model.init_weights(model.TransformerLM(cfg), generator=torch.Generator().manual_seed(0))
    again = model.init_weights(model.TransformerLM(cfg), generator=torch.Generator().manual_seed(0))
    assert all(torch.equal(a, b) for a, b in zip(lm.parameters(), again.parameters()))
    ids = torch.randint(0, 32, (8, 65), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        out = lm(ids[:, :-1], ids[:, 1:])
    assert abs(out.loss.item() - math.log(32)) < 0.01
    assert lm.blocks[1].attention.proj.weight.std().item() == pytest.approx(0.01, rel=0.05)
    assert lm.blocks[1].attention.qkv.weight.std().item() == pytest.approx(0.02, rel=0.05)
    assert torch.equal(lm.ln_f.weight, torch.ones(64)) and torch.equal(lm.blocks[0].feedforward.fc1.bias, torch.zeros(256))
    # seed 003's comment says tying saves 36%; the ledger says about 8%
    untied = model.parameter_count(1200, 128, 12, 128, 256)
    assert untied == 1_907_456 and 1200 * 128 / untied == pytest.approx(0.0805, abs=1e-3)


# --- the visible checks ----------------------------------------------------------------------


VISIBLE = {"model_forward": "check_model_forward", "init_weights": "check_init_weights",
           "frozen_parameters": "check_frozen_parameters", "unreached_parameters": "check_unreached_parameters",
           "unoptimized_parameters": "check_unoptimized_parameters", "ledger_gap": "check_ledger_gap"}


def _run_visible(exercise_id, function):
    """The visible check of the exercise with `function` in the reference's place."""
    exercise = CHAPTER.item(exercise_id)
    module = load(exercise.module)
    owner_name, _, attribute = exercise.target.rpartition(".")
    owner = getattr(module, owner_name) if owner_name else module
    saved = owner.__dict__[attribute]
    setattr(owner, attribute, function)
    try:
        getattr(judges, VISIBLE[exercise_id]).__wrapped__()
        return None
    except Exception as exc:  # an assertion, or an error the wrong wiring raises (a shape mismatch, say)
        return f"{type(exc).__name__}: {exc}"
    finally:
        setattr(owner, attribute, saved)


@pytest.fixture(autouse=False)
def reference_package(monkeypatch):
    """The visible checks import `hero_transformer`: point that name at the reference modules."""
    package = sys.modules[reference.PRIVATE]
    monkeypatch.setitem(sys.modules, "hero_transformer", package)
    for name in ("model", "audit", "embeddings", "positions"):
        setattr(package, name, load(name))
        monkeypatch.setitem(sys.modules, f"hero_transformer.{name}", load(name))


def test_the_visible_checks_pass_the_reference_and_the_variants(reference_package):
    for exercise_id in VISIBLE:
        getattr(judges, VISIBLE[exercise_id]).__wrapped__()
    failed = [(v.id, problem) for v in CHAPTER.entries("correct")
              if (problem := _run_visible(v.exercise, v.function)) is not None]
    assert not failed, failed


def test_the_visible_checks_catch_most_known_faults(reference_package):
    """A student who runs the visible check learns about most known misconceptions before submitting
    (the rest need the hidden cases: a misplaced dropout is invisible with dropout 0, a LayerNorm
    left alone by init_weights is invisible on a fresh model, whose norms already hold 1 and 0, and
    the visible audit example has no gradient whose entries cancel)."""
    missed = [f.id for f in CHAPTER.entries("fault") if _run_visible(f.exercise, f.function) is None]
    # and the audit's own hidden setups: a buffer among the parameters, a detached alias in the optimizer, a
    # gradient of 1e-25 (the visible toy has none of them)
    assert set(missed) <= {"embedding_dropout_skipped", "tied_head", "generator_ignored",
                           "layer_norm_left_alone", "gradient_sum_zero", "state_dict_names", "held_by_storage",
                           "zero_norm"}, sorted(missed)


def _sample(name):
    if CHAPTER.id not in SAMPLE_ROOTS:
        pytest.skip("HERO_TEST_ASSIGNMENTS leaves ch07_model out")
    return SAMPLE_ROOTS[CHAPTER.id] / name


def test_visible_checks_answer_a_stub_in_one_line_and_let_run_all_go_on():
    code = ("from hero_transformer import model_checks, checks\n"
            f"for name in {list(VISIBLE.values())!r}:\n"
            "    getattr(model_checks, name)()\n"
            "checks.answered('uniform_loss', ...)\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=_sample("stubs"), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    for exercise in VISIBLE:
        assert f"尚未实现：练习 {exercise} 还是 raise NotImplementedError('{exercise}')" in done.stderr
    assert "尚未作答" in done.stderr and "Traceback" not in done.stderr and "✓" not in done.stdout


def test_visible_checks_pass_on_the_reference_and_print_one_tick_each():
    code = ("from hero_transformer import model_checks\n"
            f"for name in {list(VISIBLE.values())!r}:\n"
            "    getattr(model_checks, name)()\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=_sample("reference"), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("✓") == len(VISIBLE) and not done.stderr

"""Answers must be earned, in every chapter: no graded value is written in the student's
notebook, a value copied from it earns nothing, the expected value itself earns the answer,
and the feedback of a wrong answer names the likely mistake but never the expected value or an
error size.  The chapter-5 tests at the end check that chapter's own walkthrough end to end."""

import ast
import json
import re

import pytest

from autograder import engine, probes, reference, registry

from conftest import CHAPTER, TESTED

NUMBER = r"-?\d+(?:,\d{3})*(?:\.\d+)?(?:e-?\d+)?"
ANSWERS = [(assignment, answer) for assignment in TESTED for answer in assignment.answers]
MISTAKES = [(assignment, answer, mistake) for assignment, answer in ANSWERS for mistake in answer.mistakes]


def _answer_id(value):
    return getattr(value, "id", None)


def _sources(assignment):
    released = registry.REPO_ROOT / registry.RELEASE_DIR / assignment.id / assignment.notebook_name
    cells = json.loads(released.read_text(encoding="utf-8"))["cells"]
    return [(cell["cell_type"], "".join(cell["source"])) for cell in cells]


def _number(text):
    value = float(text.replace(",", ""))
    return int(value) if value.is_integer() and "." not in text and "e" not in text else value


def copyable_values(assignment):
    """Every value a student could copy from the released notebook: each number in its text,
    each bracketed or parenthesised run of numbers, and each literal list, tuple or dict in its
    code (the walkthrough's shape table, say)."""
    found = []
    for kind, text in _sources(assignment):
        found += [_number(m) for m in re.findall(NUMBER, text)]
        found += [[_number(n) for n in re.findall(NUMBER, group)]
                  for group in re.findall(rf"[(\[]\s*{NUMBER}(?:\s*,\s*{NUMBER})+\s*[)\]]", text)]
        if kind == "code":
            python = "\n".join(line for line in text.splitlines() if not line.startswith("%"))  # magics
            for node in ast.walk(ast.parse(python)):
                if isinstance(node, (ast.List, ast.Tuple, ast.Dict)):
                    try:
                        found.append(ast.literal_eval(node))
                    except ValueError:
                        pass
    return found


def judge(answer, value):
    body = {"values": {answer.variable: {"ok": probes.encode(value)}}, "cell_failures": []}
    reply = {"status": "ok", "payload": {"body": body}, "output_tail": ""}
    return engine.judge_answer(answer, 1.0, reply, None)


def expected_texts(value):
    """The ways an expected value could be written down: each number to 3-7 decimals, each
    integer with and without a thousands separator, a list of integers or of strings as Python
    or JSON writes it, a tensor by its values."""
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, dict):
        return {text for item in value.values() for text in expected_texts(item)}
    if isinstance(value, list):
        if value and all(isinstance(v, str) for v in value):
            return {repr(value), json.dumps(value, ensure_ascii=False)}
        if all(isinstance(v, int) for v in value):
            return {str(value), str(value).replace(" ", "")} | {f"{v:,}" for v in value if abs(v) >= 1000}
        return {text for item in value for text in expected_texts(item)}
    if isinstance(value, str):
        return {repr(value)}
    if isinstance(value, int):
        return {str(value), f"{value:,}"}
    return {f"{value:.{digits}f}" for digits in range(3, 8)}


@pytest.mark.parametrize("assignment, answer", ANSWERS, ids=_answer_id)
def test_no_expected_value_is_written_in_the_student_notebook(assignment, answer):
    text = "\n".join(source for _, source in _sources(assignment))
    found = sorted(t for t in expected_texts(engine.expected_answer(answer.id)) if t in text)
    assert not found, f"{answer.id}: the released notebook shows {found}"


@pytest.mark.parametrize("assignment, answer", ANSWERS, ids=_answer_id)
def test_no_value_copied_from_the_notebook_earns_the_answer(assignment, answer):
    candidates = copyable_values(assignment)
    assert len(candidates) > 20  # the walkthrough's numbers, pairs and tables are all in
    earned = [value for value in candidates if judge(answer, value).status == "passed"]
    assert not earned, f"{answer.id} is earned by copying {earned[:3]}"


@pytest.mark.parametrize("assignment, answer", ANSWERS, ids=_answer_id)
def test_the_expected_value_earns_the_answer(assignment, answer):
    assert judge(answer, engine.expected_answer(answer.id)).status == "passed"


@pytest.mark.parametrize("assignment, answer, mistake", MISTAKES,
                         ids=[f"{answer.id}-{answer.mistakes.index(mistake)}" for _, answer, mistake in MISTAKES])
def test_a_known_mistake_is_named_and_the_answer_is_not_shown(assignment, answer, mistake):
    value = mistake.value(reference.load(answer.module))
    assert engine._answer_problem(answer, value, engine.expected_answer(answer.id)) is not None
    result = judge(answer, value)
    assert result.status == "failed"
    assert mistake.en in result.feedback_en and mistake.zh in result.feedback_zh, result.feedback_en
    feedback = result.feedback_zh + result.feedback_en + json.dumps([c.__dict__ for c in result.checks],
                                                                    ensure_ascii=False)
    leaked = sorted(t for t in expected_texts(engine.expected_answer(answer.id)) if t in feedback)
    assert not leaked, leaked
    assert "largest error" not in feedback and "最大误差" not in feedback


@pytest.mark.parametrize("assignment", TESTED, ids=_answer_id)
def test_every_answer_has_a_known_mistake_and_one_point(assignment):
    assert all(answer.mistakes for answer in assignment.answers)
    points = assignment.points()
    assert all(points[answer.id] == 1 for answer in assignment.answers)


def test_the_walkthroughs_own_values_earn_nothing_through_the_grader(submission, grade):
    """End to end: every answer cell holds the walkthrough's value for the same question."""
    copied = {
        "normalised_variance": "normalised_variance = 0.99999",
        "sample_variance_output": "sample_variance_output = [-0.7071, 0.7071]",
        "near_constant_output": "near_constant_output = [0.5, -1.0]",
        "residual_output": "residual_output = [0.9206722, 3.4206696]",
        "increment_gap": "increment_gap = 0.4999975",
        "shape_drill": "shape_drill = table",  # the given cell's own table
        "per_block_params": "per_block_params = 49728",
        "total_params": "total_params = 107776",
        "small_total_params": "small_total_params = 424",
    }
    assert set(copied) == {a.id for a in CHAPTER.answers}
    report = grade(submission(answers=copied))
    assert {i.id: i.score for i in report.items if i.kind == "answer"} == {a: 0 for a in copied}
    # the exercises are untouched
    assert all(i.score == i.max_score for i in report.items if i.kind == "exercise")


def test_chapter_five_knows_at_least_twenty_mistakes():
    assert sum(len(answer.mistakes) for answer in CHAPTER.answers) >= 20


def test_a_wrong_shape_table_names_the_wrong_keys_only():
    answer = CHAPTER.item("shape_drill")
    value = dict(engine.expected_answer("shape_drill"), ffn_hidden=[3, 5, 8])
    result = judge(answer, value)
    assert result.status == "failed" and "ffn_hidden" in result.feedback_en
    assert "[3, 5, 32]" not in result.feedback_en + result.feedback_zh


def test_a_numpy_number_counts_as_the_number_it_holds():
    """numpy.int64 is no subclass of int: an answer computed with numpy still earns its point."""
    import numpy

    answer = CHAPTER.item("per_block_params")
    assert judge(answer, numpy.int64(engine.expected_answer(answer.id))).status == "passed"
    assert judge(answer, numpy.int64(1)).status == "failed"
    assert judge(CHAPTER.item("increment_gap"), numpy.float64(engine.expected_answer("increment_gap"))).status == "passed"

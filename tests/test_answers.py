"""Answers must be earned: no graded value is written in the student's notebook, a value copied
from it earns nothing, and the feedback of a wrong answer names the likely mistake but never the
expected value or an error size."""

import ast
import json
import re

import pytest

from autograder import engine, probes, registry

from conftest import CHAPTER

RELEASED = registry.REPO_ROOT / registry.RELEASE_DIR / CHAPTER.id / CHAPTER.notebook_name
NUMBER = r"-?\d+(?:,\d{3})*(?:\.\d+)?(?:e-?\d+)?"


def _sources():
    cells = json.loads(RELEASED.read_text(encoding="utf-8"))["cells"]
    return [(cell["cell_type"], "".join(cell["source"])) for cell in cells]


def _number(text):
    value = float(text.replace(",", ""))
    return int(value) if value.is_integer() and "." not in text and "e" not in text else value


def copyable_values():
    """Every value a student could copy from the released notebook: each number in its text,
    each bracketed or parenthesised run of numbers, and each literal list, tuple or dict in its
    code (the walkthrough's shape table, say)."""
    found = []
    for kind, text in _sources():
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
    integer with and without a thousands separator, each shape list."""
    if isinstance(value, dict):
        return {text for item in value.values() for text in expected_texts(item)}
    if isinstance(value, list):
        if all(isinstance(v, int) for v in value):
            return {str(value), str(value).replace(" ", "")}
        return {text for item in value for text in expected_texts(item)}
    if isinstance(value, int):
        return {str(value), f"{value:,}"}
    return {f"{value:.{digits}f}" for digits in range(3, 8)}


@pytest.mark.parametrize("answer", CHAPTER.answers, ids=lambda a: a.id)
def test_no_expected_value_is_written_in_the_student_notebook(answer):
    text = "\n".join(source for _, source in _sources())
    found = sorted(t for t in expected_texts(engine.expected_answer(answer.id)) if t in text)
    assert not found, f"{answer.id}: the released notebook shows {found}"


@pytest.mark.parametrize("answer", CHAPTER.answers, ids=lambda a: a.id)
def test_no_value_copied_from_the_notebook_earns_the_answer(answer):
    candidates = copyable_values()
    assert len(candidates) > 100  # the walkthrough's numbers, pairs and the shape table are all in
    earned = [value for value in candidates if judge(answer, value).status == "passed"]
    assert not earned, f"{answer.id} is earned by copying {earned[:3]}"


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


MISTAKES = [(answer, mistake) for answer in CHAPTER.answers for mistake in answer.mistakes]


@pytest.mark.parametrize("answer, mistake", MISTAKES,
                         ids=[f"{answer.id}-{answer.mistakes.index(mistake)}" for answer, mistake in MISTAKES])
def test_a_known_mistake_is_named_and_the_answer_is_not_shown(answer, mistake):
    value = mistake.value(engine.reference.model)
    result = judge(answer, value)
    assert result.status == "failed"
    assert mistake.en in result.feedback_en and mistake.zh in result.feedback_zh, result.feedback_en
    feedback = result.feedback_zh + result.feedback_en + json.dumps([c.__dict__ for c in result.checks],
                                                                    ensure_ascii=False)
    leaked = sorted(t for t in expected_texts(engine.expected_answer(answer.id)) if t in feedback)
    assert not leaked, leaked
    assert "largest error" not in feedback and "最大误差" not in feedback


def test_every_answer_has_a_known_mistake():
    assert len(MISTAKES) >= 20
    assert all(answer.mistakes for answer in CHAPTER.answers)


def test_a_wrong_shape_table_names_the_wrong_keys_only():
    answer = CHAPTER.item("shape_drill")
    value = dict(engine.expected_answer("shape_drill"), ffn_hidden=[3, 5, 8])
    result = judge(answer, value)
    assert result.status == "failed" and "ffn_hidden" in result.feedback_en
    assert "[3, 5, 32]" not in result.feedback_en + result.feedback_zh

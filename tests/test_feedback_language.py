"""Every message exists in both languages, each in its own: the Chinese text is Chinese, the
English text holds no Chinese (a student's own data quoted in it excepted: a text case, a
character of the corpus)."""

import ast
import re
from pathlib import Path

import pytest

from autograder import registry
from conftest import TESTED

CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")
# what feedback quotes from the student's data or a case's inputs: repr'd strings (on one line: an
# apostrophe in a line's words, "the caller's", opens none), "inputs ...", and what the student's
# code raised (its message and traceback: the package's own errors are Chinese)
QUOTED = re.compile(r"inputs .*?\)(?=: )|raised [\w.]+: .*|'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"", re.DOTALL)


def _literal(node):
    """The constant text of a string expression (an f-string's literal parts, a + b), or None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(part.value for part in node.values if isinstance(part, ast.Constant))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _literal(node.left), _literal(node.right)
        return None if left is None and right is None else (left or "") + (right or "")
    return None


def _zh_en_pairs():
    """Every (zh, en) pair written in the grader's code: a 2-tuple, or two neighbouring arguments
    of a call, whose first text is Chinese."""
    for path in sorted((registry.REPO_ROOT / "autograder").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            runs = [node.elts] if isinstance(node, ast.Tuple) and len(node.elts) == 2 else []
            runs += [node.args[i:i + 2] for i in range(len(node.args) - 1)] if isinstance(node, ast.Call) else []
            for first, second in runs:
                zh, en = _literal(first), _literal(second)
                if zh and en and CJK.search(zh):
                    yield f"{Path(path).relative_to(registry.REPO_ROOT)}:{node.lineno}", en


def test_no_english_message_in_the_grader_code_holds_chinese():
    mixed = [f"{where}: {en[:80]!r}" for where, en in _zh_en_pairs() if CJK.search(en)]
    assert not mixed, "\n".join(mixed)
    assert sum(1 for _ in _zh_en_pairs()) > 150  # the scan does see the messages


@pytest.mark.parametrize("assignment", TESTED, ids=lambda a: a.id)
def test_every_fault_and_answer_message_is_in_its_own_language(assignment):
    texts = [(f"fault {e.id}", e.zh, e.en) for e in assignment.entries("fault")]  # what feedback shows
    texts += [(f"answer {a.id} mistake {i}", m.zh, m.en) for a in assignment.answers for i, m in enumerate(a.mistakes)]
    texts += [(f"title {item.id}", item.title_zh, item.title_en) for item in assignment.exercises + assignment.answers]
    for where, zh, en in texts:
        assert CJK.search(zh), f"{where}: the Chinese text has no Chinese: {zh!r}"
        assert not CJK.search(en), f"{where}: the English text holds Chinese: {en!r}"


def test_feedback_of_every_graded_sample_is_english_in_english(reports):
    """The messages the grader composes at run time (a value described, a check's words)."""
    mixed = []
    for (assignment_id, sample), report in reports.items():
        for item in report.items:
            for text in [item.feedback_en] + [check.en for check in item.checks]:
                if CJK.search(QUOTED.sub("", text)):
                    mixed.append(f"{assignment_id}/{sample} {item.id}: {text[:160]!r}")
    assert not mixed, "\n".join(mixed[:20])

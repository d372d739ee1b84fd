"""Hidden tests when a notebook kernel runs them itself.

The source notebook's hidden-test cells call `hidden_check(...)`.  Under
`nbgrader autograde` with this course's configuration those cells never run:
the `HeroAutograde` preprocessor grades the submission out of process and
writes the verdicts into them.  They do run when the solution notebook is
executed (the test suite does), or when an instructor runs plain nbgrader; in
that case this module applies the very same probes and judges in the kernel.
That path is for checking the course itself, not for grading untrusted code:
a kernel that ran student code can be tampered with.
"""

import dataclasses
import importlib
from pathlib import Path

from . import engine, probes, registry


def _student_module(name):
    # whichever copy of the package the kernel imports: the student's
    return importlib.import_module(f"{registry.PACKAGE}.{name}")


def _reaches(assignment, exercise):
    """reach.charged for the exercise, read from the files of the package the kernel imports."""
    folder = Path(_student_module(exercise.module).__file__).parent
    files = {f"{registry.PACKAGE}/{path.relative_to(folder).as_posix()}": path.read_text(encoding="utf-8", errors="replace")
             for path in sorted(folder.rglob("*.py"))}
    return engine.reaches_by_exercise(files, assignment)[exercise.id]


def _as_reply(payload_body):
    return {"status": "ok", "payload": {"body": payload_body}, "output_tail": ""}


def hidden_check(item_id, value=None):
    """Raise AssertionError with the feedback when the exercise or answer fails."""
    assignment = registry.assignment_of(item_id)
    item = assignment.item(item_id)
    max_score = assignment.points()[item_id]
    if isinstance(item, registry.Exercise):
        with probes.watching([dataclasses.asdict(entry) for entry in item.forbids]) as forbidden:
            outputs = probes.run_all(assignment.part("probes").run_case, _student_module(item.module), item.id,
                                     engine.fresh_copy(engine.cases_of(item.id)), "cpu")
        body = {"devices": ["cpu"], "outputs": {"cpu": outputs}, "forbidden": sorted(forbidden)}
        result = engine.judge_exercise(item, max_score, _as_reply(body), set(), _reaches(assignment, item))
    else:
        body = {"values": {item.variable: {"ok": probes.encode(value)}}, "cell_failures": []}
        result = engine.judge_answer(item, max_score, _as_reply(body), None)
    if result.status != "passed":
        raise AssertionError(f"{result.feedback_zh}\n({result.feedback_en})")
    print(f"✓ {item_id}: {result.feedback_zh}")

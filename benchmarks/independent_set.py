"""Grade the independent set: exercise bodies written from the student release only.

    .venv/bin/python benchmarks/independent_set.py [--chapter ch05_block ...] [--out build/independent.md]

benchmarks/independent/<assignment>/<exercise>__<correct|faulty>_<name>.py each hold one
function with the exercise's signature and a header of comment lines (exercise, kind, class,
rule, shows).  They were written by people (or agents) who read only student/<assignment>/ and
the README's model conventions, never the grading folders, the reference or the hidden tests, so
they measure the grader on mistakes nobody tuned it for (the catalogues are the opposite: every
entry there was written knowing the tests).

Each body replaces its exercise in the reference package and the grader grades that exercise
alone.  A correct body must pass; a faulty body must lose the exercise.  Prints a per-chapter
table and every wrong verdict with the grader's words; `--out` writes the same as Markdown, with
every faulty body's feedback for review (does it name what the body does?).  Exits 1 when any
verdict is wrong.
"""

import argparse
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autograder import engine, registry, release  # noqa: E402

SET = ROOT / "benchmarks" / "independent"
HEADER = re.compile(r"^#\s*(exercise|kind|class|rule|shows):\s*(.*)$")


@dataclass(frozen=True)
class Body:
    """One body of the set: `exercise` and `body(indent)` are what release.sample_package asks of a
    replacement."""

    path: Path
    assignment: str
    exercise: str
    kind: str  # "correct" or "faulty"
    category: str
    rule: str
    source: str

    @property
    def name(self):
        return self.path.stem

    def body(self, indent):
        return release.body_lines(self.source, indent)


def read(path: Path, assignment: str) -> Body:
    text = path.read_text(encoding="utf-8")
    fields = {}
    for line in text.splitlines():
        found = HEADER.match(line)
        if found and found.group(1) not in fields:
            fields[found.group(1)] = found.group(2).strip()
    exercise, _, rest = path.stem.partition("__")
    kind = rest.partition("_")[0]
    if fields.get("exercise", exercise) != exercise or kind not in ("correct", "faulty"):
        raise ValueError(f"{path}: the name says {exercise}/{kind}, the header {fields}")
    if exercise not in {e.id for e in registry.ASSIGNMENTS[assignment].exercises}:
        raise ValueError(f"{path}: {exercise} is not an exercise of {assignment}")
    source = "\n".join(line for line in text.splitlines() if not line.startswith("#"))
    return Body(path, assignment, exercise, kind, fields.get("class", "?"), fields.get("rule", ""), source)


def bodies(chapters=None):
    found = []
    for folder in sorted(p for p in SET.iterdir() if p.is_dir()):
        if chapters and folder.name not in chapters:
            continue
        found += [read(path, folder.name) for path in sorted(folder.glob("*.py"))]
    return found


def grade(chosen, show_progress=True):
    """[(body, item report)], every body graded on its own exercise."""
    graded = []
    with tempfile.TemporaryDirectory(prefix="hero-independent-") as root:
        pool = engine.WorkerPool()
        try:
            by_assignment = {}
            for body in chosen:
                by_assignment.setdefault(body.assignment, []).append(body)
            for assignment_id, group in by_assignment.items():
                chapter = registry.ASSIGNMENTS[assignment_id].chapter
                folders = []
                for body in group:
                    folder = Path(root, assignment_id, body.name)
                    release.write_files(folder, release.sample_package(chapter, body))
                    folders.append(folder)
                reports = engine.grade_many(folders, assignment_id, pool, show_progress=show_progress,
                                            only=[[b.exercise] for b in group])
                graded += [(body, report.item(body.exercise)) for body, report in zip(group, reports)]
        finally:
            pool.close()
    return graded


def unchecked(body, item):
    """A faulty body whose one mistake is the device its result lands on, passing where the grader
    has no CUDA to show it (CI, this machine): counted apart, as `hero mutants` counts such mutants."""
    import torch
    return body.kind == "faulty" and body.category == "device" and item.status == "passed" \
        and not torch.cuda.is_available()


def right(body, item):
    return (item.status == "passed") == (body.kind == "correct") or unchecked(body, item)


def table(graded):
    rows, totals = [], [0, 0, 0, 0, 0]
    for assignment in dict.fromkeys(b.assignment for b, _ in graded):
        mine = [(b, i) for b, i in graded if b.assignment == assignment]
        figures = [sum(b.kind == kind for b, _ in mine) for kind in ("faulty", "correct")]
        figures = [figures[0], sum(b.kind == "faulty" and i.status != "passed" for b, i in mine),
                   sum(unchecked(b, i) for b, i in mine),
                   figures[1], sum(b.kind == "correct" and i.status == "passed" for b, i in mine)]
        totals = [t + f for t, f in zip(totals, figures)]
        rows.append((assignment, *figures))
    rows.append(("all", *totals))
    lines = ["| assignment | faulty | faulty losing | device faults unchecked here (no CUDA) | correct | "
             "correct full marks |", "|---|---|---|---|---|---|"]
    return "\n".join(lines + ["| " + " | ".join(map(str, row)) + " |" for row in rows])


def markdown(graded):
    out = ["# The independent set, graded", "", "`.venv/bin/python benchmarks/independent_set.py`", "",
           table(graded), ""]
    wrong = [(b, i) for b, i in graded if not right(b, i)]
    out += ["## Wrong verdicts", ""] + (["none"] if not wrong else [])
    for body, item in wrong:
        out += [f"- {body.assignment}/{body.name} ({body.kind}, {body.category}): {item.status}. "
                f"{item.feedback_en or ''}".rstrip()]
    out += ["", "## What each faulty body was told", "", "| body | class | rule it breaks | feedback |",
            "|---|---|---|---|"]
    for body, item in graded:
        if body.kind == "faulty":
            cell = (item.feedback_en or item.status).replace("\n", " ").replace("|", "¦")
            out.append(f"| {body.assignment}/{body.name} | {body.category} | {body.rule.replace('|', '¦')} | {cell} |")
    return "\n".join(out) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chapter", nargs="*", help="only these assignments (default: all)")
    parser.add_argument("--out", help="write the Markdown report here")
    args = parser.parse_args(argv)
    graded = grade(bodies(args.chapter))
    print(table(graded))
    wrong = [(b, i) for b, i in graded if not right(b, i)]
    for body, item in wrong:
        print(f"WRONG {body.assignment}/{body.name} ({body.kind}): {item.status} {item.feedback_en or ''}"[:400])
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(markdown(graded), encoding="utf-8")
    print(f"{len(graded)} bodies graded: {len(graded) - len(wrong)} verdicts right, {len(wrong)} wrong")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())

"""The main job: release the course, autograde the sample submissions with nbgrader, show the grades.

Runs the instructor's real workflow on a fresh copy of the course in build/demo/
(so the course's own gradebook.db is never touched, and a changed notebook never
clashes with old submissions): generate_assignment, samples generated
(autograder/samples.py) into submitted/<sample>/<assignment>/, autograde, generate_feedback, export, and then
checks every expectation: the reference and the correct variants get full marks,
the stubs zero, and each faulty sample loses points exactly on the exercise its
fault lives in.

In a terminal every step shows its progress on stderr (autograder/progress.py): a bar with ETA
where the count is known (the release's steps, the samples written, the submissions autograded
and given feedback), otherwise how long the step has run, redrawn every second.  Each assignment
ends with one line (its verdict, its time, the time of each step); the last line is the total.
"""

import json
import shutil
import subprocess
import sys

from . import progress, registry

with progress.bar(None, "loading nbformat, nbgrader and torch"):  # seconds of imports: shown, not silent
    from . import release, samples
    from .nbgrader_glue import REPORT_NAME

ROOT = registry.REPO_ROOT / "build" / "demo"


def fresh_course():
    shutil.rmtree(ROOT, ignore_errors=True)
    shutil.copytree(registry.COURSE_DIR, ROOT / registry.SOURCE_DIR,
                    ignore=shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints"))
    shutil.copy(registry.REPO_ROOT / "nbgrader_config.py", ROOT)


def nbgrader(*args, log_level="WARN", total=None, done=None):
    """Run one nbgrader command in the demo's course root, showing meanwhile how long it has run
    or, with `total` and `done` (a file pattern under it, one per finished submission), a bar
    with ETA; returns its time in seconds."""
    command = [sys.executable, "-m", "nbgrader", *args, f"--log-level={log_level}"]
    print("$ nbgrader " + " ".join(args), flush=True)
    timer = progress.Timer()
    count = (lambda: len(list(ROOT.glob(done)))) if done else None
    status = progress.run_counting(command, total, count, f"nbgrader {args[0]}", cwd=ROOT)
    if status:
        raise subprocess.CalledProcessError(status, command)
    return timer.elapsed


def generate_samples(assignment):
    """samples.write for one assignment into the course root, with a bar counting the sample
    folders whose notebook (written last) is there."""
    folder = ROOT / "samples" / assignment.id
    with progress.bar(len(samples.planned(assignment)), "samples", unit="sample",
                      poll=lambda: len(list(folder.glob(f"*/{assignment.notebook_name}")))):
        return samples.write(ROOT / "samples", [assignment], with_hostile=False)[assignment.id]


def expected_losses(assignment, sample):
    """The items a sample must lose: nothing for the reference and the correct variants,
    everything for the stubs, the faulty exercise for a fault or a forbidden shortcut."""
    if sample == "stubs":
        return None  # every item
    entry = next((e for e in assignment.entries() if e.sample == sample), None)
    return {entry.exercise} if entry and entry.kind != "correct" else set()


def grades_from_gradebook(assignment):
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{ROOT / 'gradebook.db'}") as gradebook:
        table = {}
        for submission in gradebook.assignment_submissions(assignment.id):
            notebook = submission.notebooks[0]
            table[submission.student.id] = {grade.name: grade.score for grade in notebook.grades}
        return table


def run(lang="zh"):
    timer = progress.Timer()
    print("== building the release (student/, solutions/)", flush=True)
    release.build(show_progress=True)
    print(f"release built in {progress.duration(timer.elapsed)}", flush=True)
    fresh_course()
    print(f"== course root for the demo: {ROOT.relative_to(registry.REPO_ROOT)}/", flush=True)
    failures = 0
    assignments = list(registry.ASSIGNMENTS.values())
    for number, assignment in enumerate(assignments, 1):
        print(f"\n== {assignment.id} ({number}/{len(assignments)})", flush=True)
        took = progress.Timer()
        steps = {"generate_assignment": nbgrader("generate_assignment", assignment.id, "--force")}
        step = progress.Timer()
        generated = generate_samples(assignment)
        names = samples.names(generated)
        for name in names:
            shutil.copytree(generated / name, ROOT / "submitted" / name / assignment.id)
        steps["samples"] = step.elapsed
        print(f"{len(names)} generated samples in submitted/; autograding them with nbgrader", flush=True)
        steps["autograde"] = nbgrader("autograde", assignment.id, "--force", total=len(names),
                                      done=f"autograded/*/{assignment.id}/{REPORT_NAME}")
        steps["generate_feedback"] = nbgrader("generate_feedback", assignment.id, "--force", total=len(names),
                                              done=f"feedback/*/{assignment.id}/*.html")
        steps["export"] = nbgrader("export")
        failed = _show(assignment, names, lang)
        failures += failed
        print(f"{assignment.id}: {len(names) - failed}/{len(names)} samples graded as expected in "
              f"{progress.duration(took.elapsed)} (" + ", ".join(f"{name} {progress.duration(seconds)}"
                                                         for name, seconds in steps.items()) + ")", flush=True)
    print(f"\nhero demo: done in {progress.duration(timer.elapsed)}; "
          + ("every sample graded as expected" if not failures else f"{failures} sample(s) NOT graded as expected"))
    return 1 if failures else 0


def _show(assignment, samples, lang):
    grades = grades_from_gradebook(assignment)
    points = assignment.points()
    columns = [e.id for e in assignment.exercises]
    answers = [a.id for a in assignment.answers]
    items = columns + answers
    widths = [max(len(c), 4) for c in columns]
    name_width = max(len(sample) for sample in samples) + 2
    print(f"\n== {assignment.id}: points from the gradebook ({(ROOT / 'gradebook.db').relative_to(registry.REPO_ROOT)}); "
          f"'answers' sums the {len(answers)} notebook answer cells")
    print(f"{'sample':<{name_width}}" + "  ".join(f"{c:>{w}}" for c, w in zip(columns, widths)) + f"{'answers':>9}{'total':>7}  verdict")
    maxima = [points[c] for c in columns]
    print(f"{'(max)':<{name_width}}" + "  ".join(f"{m:>{w}g}" for m, w in zip(maxima, widths))
          + f"{sum(points[a] for a in answers):>9g}{sum(points.values()):>7g}")
    failures = 0
    for sample in samples:
        row = grades.get(sample, {})
        lost = {item for item in items if row.get(item) != points[item]}
        expected = expected_losses(assignment, sample)
        ok = lost == set(items) and all(row.get(i) == 0 for i in items) if expected is None else lost == expected
        failures += not ok
        cells = "  ".join(f"{row.get(c, float('nan')):>{w}g}" for c, w in zip(columns, widths))
        answered = sum(row.get(a, 0) for a in answers)
        total = sum(row.get(i, 0) for i in items)
        print(f"{sample:<{name_width}}{cells}{answered:>9g}{total:>7g}  {'as expected' if ok else 'UNEXPECTED'}")
    faulty = [entry.sample for entry in assignment.entries("fault")]
    excerpt_sample = faulty[0] if faulty else samples[0]
    report_path = ROOT / "feedback" / excerpt_sample / assignment.id / REPORT_NAME
    report = json.loads(report_path.read_text(encoding="utf-8"))
    lost = next(item for item in report["items"] if item["status"] != "passed")
    feedback = lost["feedback_zh"] if lang == "zh" else lost["feedback_en"]
    print(f"\n== feedback excerpt ({report_path.relative_to(registry.REPO_ROOT)}, item '{lost['id']}'):\n  {feedback}")
    print(f"   isolation: {report['isolation']}; devices checked: {', '.join(report['devices'])}")
    print(f"grades exported to {(ROOT / 'grades.csv').relative_to(registry.REPO_ROOT)}")
    return failures

"""The pytest front end against `hero grade` on the same submission, side by side in one run.

    .venv/bin/python benchmarks/pytest_front_end.py [--rounds N] [--submission student/ch05_block]

Each round times, end to end (wall clock, start-up included), in alternation:
  1. `.venv/bin/hero grade SUBMISSION` from the repository root;
  2. `.venv/bin/python -m pytest --hero-submission SUBMISSION --hero-assignment ID` from the
     repository root (the README's command), then from inside the submission, from beside it,
     and as `.venv/bin/pytest` from the repository root.
Every pytest run is given HERO_TEST_CONFTEST_MARKER, a file tests/conftest.py writes when it is
imported: the script fails if grading through pytest imported the test suite's conftest.  It
prints the median of each and its ratio to `hero grade`.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from autograder import registry

ROOT = registry.REPO_ROOT
BIN = Path(sys.executable).parent


def commands(submission: Path, assignment):
    grading = ["--hero-submission", None, "--hero-assignment", assignment, "-q"]

    def pytest(start, where, path):
        return [*start, *[path if word is None else word for word in grading]], where

    python, script = [sys.executable, "-m", "pytest"], [str(BIN / "pytest")]
    return {
        "hero grade (repository root)": ([str(BIN / "hero"), "grade", str(submission.relative_to(ROOT))], ROOT),
        "python -m pytest (repository root)": pytest(python, ROOT, str(submission.relative_to(ROOT))),
        "python -m pytest (inside the submission)": pytest(python, submission, "."),
        "python -m pytest (beside it)": pytest(python, submission.parent, submission.name),
        ".venv/bin/pytest (repository root)": pytest(script, ROOT, str(submission.relative_to(ROOT))),
    }


def timed_run(command, cwd, marker: Path):
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True,
                          env=dict(os.environ, HERO_TEST_CONFTEST_MARKER=str(marker)))
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 1):  # 1: some item failed (a release fails them all)
        raise RuntimeError(f"{' '.join(command)} exited {done.returncode}:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    if marker.exists():
        raise RuntimeError(f"{' '.join(command)} imported tests/conftest.py")
    return seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="rounds of every command, alternating (default 3)")
    parser.add_argument("--submission", default="student/ch05_block", help="default: student/ch05_block")
    args = parser.parse_args()
    submission = (ROOT / args.submission).resolve()
    assignment = registry.find_assignment(submission).id
    runs = commands(submission, assignment)
    times = {label: [] for label in runs}
    with tempfile.TemporaryDirectory(prefix="hero-bench-pytest-") as scratch:
        marker = Path(scratch) / "tests-conftest-imported"
        for _ in range(args.rounds):
            for label, (command, cwd) in runs.items():
                times[label].append(timed_run(command, cwd, marker))
    hero = statistics.median(times["hero grade (repository root)"])
    print(f"{args.submission} as {assignment}, {args.rounds} rounds, {os.cpu_count()} CPUs, "
          f"load average at the end {os.getloadavg()[0]:.1f}")
    print(f"{'command':<42}{'median s':>10}{'vs hero grade':>15}   every round s")
    for label, seconds in times.items():
        median = statistics.median(seconds)
        print(f"{label:<42}{median:>10.2f}{median / hero:>14.2f}x   {' '.join(f'{s:.2f}' for s in seconds)}")
    print("tests/conftest.py was imported by no pytest run")


if __name__ == "__main__":
    main()

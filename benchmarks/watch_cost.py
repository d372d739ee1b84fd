"""What the forbidden-call watch costs (docs/grading.md, "Every route to a forbidden call").

Two measurements, per chapter:

  in-process: every exercise's probes run on the reference body, as the worker runs them, under
      this tree's `probes.watching` with the exercise's forbids and, for comparison, under the
      watch of another probes.py (`--baseline FILE`, e.g. the committed one:
      `git show HEAD:autograder/probes.py > /tmp/old_probes.py`), and with no watch at all;
      the median of --repeat runs, in milliseconds per chapter (all its exercises);
  graded: the chapter's reference sample graded end to end (`engine.grade`, sandboxed worker
      pool, warm), the median of --repeat runs, in seconds.  Run it in two trees to compare.

    .venv/bin/python benchmarks/watch_cost.py [--baseline /tmp/old_probes.py] [--repeat 7] [--graded]
"""

import argparse
import contextlib
import dataclasses
import importlib.util
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

from autograder import engine, probes, registry, samples


def load_probes(path):
    """A probes.py from elsewhere, importable next to this tree's wire.py."""
    sys.path.insert(0, str(Path(probes.__file__).parent))
    spec = importlib.util.spec_from_file_location("baseline_probes", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_chapter(assignment, watching):
    for exercise in assignment.exercises:
        forbids = [dataclasses.asdict(entry) for entry in exercise.forbids]
        module = engine.reference_module(exercise.id)
        cases = engine.fresh_copy(engine.cases_of(exercise.id))
        with (watching(forbids) if watching else contextlib.nullcontext(set())):
            probes.run_all(assignment.part("probes").run_case, module, exercise.id, cases, "cpu")


def in_process(repeat, baseline):
    watches = {"no watch": None, "this watch": probes.watching}
    if baseline:
        watches = {"no watch": None, "baseline watch": load_probes(baseline).watching, "this watch": probes.watching}
    torch.set_num_threads(1)  # as in a task
    print(f"in-process, ms per chapter (median of {repeat}; every exercise's cases on the reference, CPU):")
    print(f"{'chapter':<22}" + "".join(f"{name:>16}" for name in watches))
    for assignment in registry.ASSIGNMENTS.values():
        for watching in watches.values():
            run_chapter(assignment, watching)  # warm: reference outputs, imports, caches
        times = {name: [] for name in watches}
        for _ in range(repeat):
            for name, watching in watches.items():
                start = time.perf_counter()
                run_chapter(assignment, watching)
                times[name].append(1000 * (time.perf_counter() - start))
        print(f"{assignment.id:<22}" + "".join(f"{statistics.median(t):>16.1f}" for t in times.values()))


def graded(repeat):
    root = Path(tempfile.mkdtemp(prefix="hero-watch-cost-"))
    pool = engine.WorkerPool()
    try:
        print(f"graded end to end, s per reference sample (median of {repeat}; warm pool of {pool.size}):")
        for assignment in registry.ASSIGNMENTS.values():
            samples.write_assignment(assignment, root / assignment.id)
            folder = root / assignment.id / "reference"
            engine.grade(folder, assignment.id, pool=pool)  # warm
            runs = []
            for _ in range(repeat):
                start = time.perf_counter()
                report = engine.grade(folder, assignment.id, pool=pool)
                runs.append(time.perf_counter() - start)
            assert report.score == report.max_score, (assignment.id, report.score)
            print(f"{assignment.id:<22}{statistics.median(runs):>10.2f}   (min {min(runs):.2f}, max {max(runs):.2f})")
    finally:
        pool.close()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--baseline", help="another probes.py whose watch to time alongside this one")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--graded", action="store_true", help="also grade each reference sample end to end")
    args = parser.parse_args()
    print(f"probes: {probes.__file__}")
    in_process(args.repeat, args.baseline)
    if args.graded:
        graded(args.repeat)


if __name__ == "__main__":
    main()

"""What a task's CPU accounting and the HTML sanitiser cost, measured side by side in one run.

Each task of a worker is forked, then stacks the seccomp filter that refuses new threads and
processes (confine.forbid_new_processes) and sets RLIMIT_CPU; while it runs, the worker reads
its CPU time from /proc every 50 ms.  This prints
  1. the cost of the filter per task: forks that install it against forks that do not;
  2. the worker's own CPU time while it watches a task that spins for a few seconds, as a share
     of that task's time (what the polling costs);
  3. the time per task of a real sandboxed worker for an empty one-cell task;
  4. what sanitising costs per notebook (autograder/sanitise.py, run by nbgrader's autograde,
     formgrader and generate_feedback): every chapter's solution notebook, against reading it.

    .venv/bin/python benchmarks/task_overhead.py [--forks N]
"""

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "autograder"))

import confine  # noqa: E402  (the worker's own module: standard library and pyseccomp only)
import pyseccomp  # noqa: E402,F401  (imported once, as the worker has it when it forks a task)

from autograder import sandbox  # noqa: E402


def fork_cost(forks, setup):
    started = time.perf_counter()
    for _ in range(forks):
        pid = os.fork()
        if pid == 0:
            setup()
            os._exit(0)
        os.waitpid(pid, 0)
    return (time.perf_counter() - started) / forks


def notebook_task(source, cpu=20.0):
    return {"kind": "notebook", "files": {}, "cells": [[0, source]], "variables": [], "timeout": cpu,
            "cell_timeout": cpu, "cell_wall": sandbox.wall_cap(cpu)}


def process_cpu(pid):
    with open(f"/proc/{pid}/stat", "rb") as stat:
        fields = stat.read().rsplit(b")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def worker_pids(root):
    """The pool's worker process and everything under it that is not a task (bwrap's monitor, PID 1)."""
    found, pending = [], [root]
    while pending:
        pid = pending.pop()
        found.append(pid)
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as children:
                pending += [int(child) for child in children.read().split()]
    return found


def sanitiser_cost(repeat=5):
    import copy
    import statistics

    import nbformat

    from autograder import registry, sanitise

    for assignment in registry.ASSIGNMENTS.values():
        path = registry.REPO_ROOT / "solutions" / assignment.id / assignment.notebook_name
        notebook = nbformat.read(path, as_version=4)
        read, cleaned = [], []
        for _ in range(repeat):
            started = time.perf_counter()
            copied = copy.deepcopy(notebook)
            read.append(time.perf_counter() - started)
            started = time.perf_counter()
            sanitise.sanitise_notebook(copied)
            cleaned.append(time.perf_counter() - started)
        print(f"sanitising {assignment.id} ({len(notebook.cells)} cells): {statistics.median(cleaned) * 1e3:.1f} ms "
              f"(copying it: {statistics.median(read) * 1e3:.1f} ms)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--forks", type=int, default=200)
    args = parser.parse_args()

    bare = fork_cost(args.forks, lambda: None)
    filtered = fork_cost(args.forks, confine.forbid_new_processes)
    print(f"fork and exit: {bare * 1e3:.2f} ms; with the task filter: {filtered * 1e3:.2f} ms "
          f"(+{(filtered - bare) * 1e3:.2f} ms per task)")

    sanitiser_cost()
    pool = sandbox.WorkerPool(size=1)
    try:
        pool.wait_ready()
        worker = pool._all[0]
        spin = "import time\nend = time.process_time() + 3\nwhile time.process_time() < end:\n    pass\n"
        watchers = worker_pids(worker.proc.pid)  # before the task: the task's own process is not among them
        before = sum(process_cpu(pid) for pid in watchers)
        started = time.monotonic()
        status, _, _, usage = pool.run(notebook_task(spin))
        wall = time.monotonic() - started
        spent = sum(process_cpu(pid) for pid in watchers) - before
        print(f"a task spinning for {usage['cpu']:.2f} s of CPU ({status}, {wall:.2f} s wall): the worker used "
              f"{spent:.3f} s of CPU meanwhile ({100 * spent / wall:.2f}% of a core)")
        count = 50
        started = time.monotonic()
        for _ in range(count):
            pool.run(notebook_task("pass"))
        print(f"an empty one-cell task through a real worker ({pool.isolation}): "
              f"{(time.monotonic() - started) / count * 1e3:.1f} ms per task")
    finally:
        pool.close()


if __name__ == "__main__":
    main()

"""The class benchmark: a synthetic class graded through `nbgrader autograde` four ways, side by
side in one run, then how the parallel path grows with the class and what resuming costs.

    .venv/bin/python benchmarks/class_autograde.py [--students 25] [--assignments ch05_block ch04_attention]
                                                   [--plain-subset 4] [--no-ray]

The class: every student submits every chosen assignment; student i's submission is the i-th of
that assignment's generated samples (`hero samples`: the reference, each fault, each correct
variant...), cycled.  Each way grades a fresh copy of the same course root:
  1. plain nbgrader (nbgrader's own Execute: a kernel per submission) on a measured subset, the
     first few students of each assignment, extrapolated per submission (said so in the table);
  2. today's path: this course's nbgrader configuration with `parallel=False`, one submission at
     a time inside nbgrader's loop;
  3. the parallel path (the default): every submission prepared, graded at once in one pool of
     sandboxed workers, then recorded;
  4. the parallel path on a two-node Ray cluster on this machine (one CPU per node, so the same
     cores as 3), through `--HeroAutogradeConverter.ray_address`.
The gradebooks of 2, 3 and 4 must be identical cell by cell.  Then the parallel path on the first
assignment at a quarter, a half and all of the class (wall time, time per submission, the peak
memory of the nbgrader process and its workers), and resuming: a rerun with everything recorded,
`--force` with every result kept, and a run killed half way then started again.
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autograder import registry, samples  # noqa: E402
from hero_transformer import cluster  # noqa: E402

PLAIN_CONFIG = """load_subconfig("course/nbgrader_config.py")
from nbgrader.converters import Autograde
c.Autograde.autograde_preprocessors = Autograde.class_traits()["autograde_preprocessors"].default()
"""


def nbgrader(root, *args, env=None):
    done = subprocess.run([sys.executable, "-m", "nbgrader", *args, "--log-level=ERROR"], cwd=root, env=env,
                          capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(done.stdout[-3000:] + done.stderr[-3000:])
    return done


def build_class(base, assignments, students):
    """A course root with every assignment generated and every student's submissions in place."""
    written = samples.write(base / "samples", [registry.ASSIGNMENTS[a] for a in assignments], with_hostile=False)
    root = base / "class"
    shutil.copytree(registry.COURSE_DIR, root / registry.SOURCE_DIR)
    shutil.copy(registry.REPO_ROOT / "nbgrader_config.py", root)
    for assignment in assignments:
        nbgrader(root, "generate_assignment", assignment, "--force")
        names = samples.names(written[assignment])
        for i in range(students):
            folder = root / "submitted" / f"student{i:03d}" / assignment
            shutil.copytree(written[assignment] / names[i % len(names)], folder)
            # every submission its own bytes, as in a real class: a sample given to two students
            # would otherwise be graded once and its kept result reused for the other
            notebook = folder / f"{assignment}.ipynb"
            data = json.loads(notebook.read_text(encoding="utf-8"))
            data["metadata"]["benchmark_student"] = i
            notebook.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    return root


def copy_of(root, base, name, students=None, assignment=None, plain=False):
    """A fresh copy of the class; `students`/`assignment`: keep only the first n of one assignment."""
    target = base / name
    shutil.copytree(root, target, ignore=shutil.ignore_patterns("autograded", ".hero-results"))
    if students is not None:
        for folder in sorted((target / "submitted").iterdir())[students:]:
            shutil.rmtree(folder)
        for folder in (target / "submitted").glob("*/*"):
            if folder.name != assignment:
                shutil.rmtree(folder)
    if plain:
        (target / "nbgrader_config.py").write_text(PLAIN_CONFIG, encoding="utf-8")
    return target


class PeakMemory:
    """The largest summed RSS of a process and its descendants, sampled every 0.2 s."""

    def __init__(self, process):
        self.process, self.peak, self._stop = psutil.Process(process.pid), 0, threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self):
        while not self._stop.wait(0.2):
            try:
                tree = [self.process, *self.process.children(recursive=True)]
                self.peak = max(self.peak, sum(p.memory_info().rss for p in tree if p.is_running()))
            except psutil.Error:
                pass

    def stop(self):
        self._stop.set()
        self._thread.join()
        return self.peak


def autograde(root, assignment, *options, env=None, kill_after=None):
    """(wall seconds, peak MiB) of one `nbgrader autograde` run; killed with SIGKILL after
    `kill_after` seconds if given."""
    start = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "nbgrader", "autograde", assignment, *options,
                                "--log-level=ERROR"], cwd=root, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
    memory = PeakMemory(process)
    try:
        _, err = process.communicate(timeout=kill_after)
    except subprocess.TimeoutExpired:
        for child in psutil.Process(process.pid).children(recursive=True):
            child.kill()
        process.kill()
        process.communicate()
        err = ""
    peak = memory.stop()
    if kill_after is None and process.returncode:
        raise RuntimeError(err[-3000:])
    return time.perf_counter() - start, peak / 2 ** 20


def gradebook(root):
    """Every grade cell's score, by (student, assignment, cell)."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as book:
        return sorted((submission.student.id, assignment.name, grade.name, grade.auto_score)
                      for assignment in book.assignments
                      for submission in book.assignment_submissions(assignment.name)
                      for notebook in submission.notebooks for grade in notebook.grades)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=25)
    parser.add_argument("--assignments", nargs="+", default=["ch05_block", "ch04_attention"])
    parser.add_argument("--plain-subset", type=int, default=4, help="submissions plain nbgrader grades (measured)")
    parser.add_argument("--no-ray", action="store_true", help="leave out the two-node Ray cluster")
    args = parser.parse_args()
    first = args.assignments[0]
    n = args.students * len(args.assignments)
    with tempfile.TemporaryDirectory(prefix="hero-class-bench-") as scratch:
        base = Path(scratch)
        os.chmod(base, 0o755)
        print(f"building a class of {args.students} students x {len(args.assignments)} assignments ...", flush=True)
        root = build_class(base, args.assignments, args.students)
        rows = []
        # plain nbgrader on the first students of each assignment: each is timed, and the class's
        # time per submission is the mean over the assignments (each has as many submissions)
        plain = []
        for assignment in args.assignments:
            plain_root = copy_of(root, base, f"plain-{assignment}", args.plain_subset, assignment, plain=True)
            wall, _ = autograde(plain_root, assignment)
            plain.append(wall / args.plain_subset)
            print(f"  plain nbgrader, {assignment}: {wall / args.plain_subset:.2f} s a submission", flush=True)
        rows.append(("plain nbgrader (measured subset)", args.plain_subset * len(args.assignments),
                     sum(plain) / len(plain) * args.plain_subset * len(args.assignments)))
        serial_root = copy_of(root, base, "serial")
        wall, _ = autograde(serial_root, "*", "--HeroAutogradeConverter.parallel=False")
        rows.append(("today's path (one at a time)", n, wall))
        parallel_root = copy_of(root, base, "parallel")
        wall, _ = autograde(parallel_root, "*")
        rows.append(("parallel path", n, wall))
        same = gradebook(serial_root) == gradebook(parallel_root)
        if not args.no_ray:
            ray_root = copy_of(root, base, "ray")
            with cluster.local_cluster(nodes=2, cpus_per_node=1) as (address, env):
                wall, _ = autograde(ray_root, "*", f"--HeroAutogradeConverter.ray_address={address}", env=env)
            rows.append(("parallel path on 2 Ray nodes", n, wall))
            same = same and gradebook(ray_root) == gradebook(parallel_root)
        plain_per = rows[0][2] / rows[0][1]
        local_per = rows[2][2] / rows[2][1]
        print(f"\n{'method':<34}{'submissions':>12}{'wall s':>9}{'s / submission':>16}{'vs plain':>10}"
              f"{'vs local parallel':>19}")
        for method, count, wall in rows:
            per = wall / count
            print(f"{method:<34}{count:>12}{wall:>9.1f}{per:>16.3f}{plain_per / per:>9.1f}x{per / local_per:>18.2f}x")
        print(f"gradebooks of today's path, the parallel path{' and Ray' if not args.no_ray else ''} identical "
              f"cell by cell: {same}")
        print("plain nbgrader's figure is its measured subset's time per submission, taken as the class's "
              "(extrapolated)")

        print(f"\ngrowth of the parallel path ({first} alone):")
        print(f"{'students':>9}{'wall s':>9}{'s / submission':>16}{'peak MiB':>10}")
        for count in sorted({max(1, args.students // 4), max(1, args.students // 2), args.students}):
            grown = copy_of(root, base, f"grow{count}", count, first)
            wall, peak = autograde(grown, first)
            print(f"{count:>9}{wall:>9.1f}{wall / count:>16.3f}{peak:>10.0f}")

        print("\nresuming (the parallel path's class):")
        wall, _ = autograde(parallel_root, "*")
        print(f"  rerun with every grade recorded: {wall:.1f} s")
        wall, _ = autograde(parallel_root, "*", "--force")
        print(f"  --force, every result kept:      {wall:.1f} s")
        killed_root = copy_of(root, base, "killed")
        half = rows[2][2] / 2
        first_part, _ = autograde(killed_root, "*", kill_after=half)
        rest, _ = autograde(killed_root, "*")
        print(f"  killed at {half:.0f} s, then resumed: {first_part + rest:.1f} s in all against {rows[2][2]:.1f} s "
              f"clean; gradebook identical: {gradebook(killed_root) == gradebook(parallel_root)}")


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    main()

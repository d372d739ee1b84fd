"""Grading speed, side by side in one run: `hero grade` against `nbgrader autograde`.

Three ways to grade the same submissions (generated samples, `hero samples`, copied
into fresh course roots):
  1. `hero grade A B C ...`: one process, a pool of sandboxed workers;
  2. `nbgrader autograde` with this course's configuration (HeroAutograde);
  3. plain `nbgrader autograde` (nbgrader's own Execute preprocessor: one kernel per
     submission runs the hidden-test cells in the student's process).
Each is timed end to end (wall clock, including start-up), for one submission
and for a batch; the script also checks that the two front ends of this grader
agree on every score, and lists where plain nbgrader's in-kernel grading differs.

    .venv/bin/python benchmarks/grading_speed.py [--batch N]
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from nbgrader.api import Gradebook

from autograder import registry, samples

ASSIGNMENT = "ch05_block"
SAMPLES = samples.write(Path(tempfile.mkdtemp(prefix="hero-bench-samples-")), [registry.ASSIGNMENTS[ASSIGNMENT]],
                        with_hostile=False)[ASSIGNMENT]
PLAIN_CONFIG = """load_subconfig("course/nbgrader_config.py")
from nbgrader.converters import Autograde
c.Autograde.autograde_preprocessors = Autograde.class_traits()["autograde_preprocessors"].default()
"""


def course_root(base, name, chosen, plain):
    root = base / name
    shutil.copytree(registry.COURSE_DIR, root / registry.SOURCE_DIR)
    if plain:
        (root / "nbgrader_config.py").write_text(PLAIN_CONFIG, encoding="utf-8")
    else:
        shutil.copy(registry.REPO_ROOT / "nbgrader_config.py", root)
    run(root, "generate_assignment", ASSIGNMENT, "--force")
    for sample in chosen:
        shutil.copytree(SAMPLES / sample, root / "submitted" / sample / ASSIGNMENT)
    return root


def run(root, *args):
    done = subprocess.run([sys.executable, "-m", "nbgrader", *args, "--log-level=ERROR"], cwd=root,
                          capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(done.stdout + done.stderr)


def timed(action):
    start = time.perf_counter()
    result = action()
    return time.perf_counter() - start, result


def gradebook_scores(root):
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gradebook:
        return {s.student.id: {g.name: g.score for g in s.notebooks[0].grades}
                for s in gradebook.assignment_submissions(ASSIGNMENT)}


def hero_scores(chosen, sandbox=None):
    folders = [str(SAMPLES / s) for s in chosen]
    env = dict(os.environ, HERO_SANDBOX=sandbox) if sandbox else None
    done = subprocess.run([sys.executable, "-m", "autograder.cli", "grade", *folders, "--format", "json"],
                          capture_output=True, text=True, check=True, env=env)
    reports = json.loads(done.stdout)
    reports = reports if isinstance(reports, list) else [reports]
    return {Path(r["submission"]).name: {i["id"]: i["score"] for i in r["items"]} for r in reports}


def measure(base, chosen, label):
    hero_time, hero = timed(lambda: hero_scores(chosen))
    ours_root = course_root(base, f"hero-{label}", chosen, plain=False)
    ours_time, _ = timed(lambda: run(ours_root, "autograde", ASSIGNMENT, "--force"))
    plain_root = course_root(base, f"plain-{label}", chosen, plain=True)
    plain_time, _ = timed(lambda: run(plain_root, "autograde", ASSIGNMENT, "--force"))
    ours, plain = gradebook_scores(ours_root), gradebook_scores(plain_root)
    items = [(student, item) for student in hero for item in hero[student]]
    # plain nbgrader runs the visible checks in the student's kernel, with the student's own
    # LayerNorm and FFN inside the block: there one bug can cost two exercises
    plain_differs = [(s, i) for s, i in items if plain[s][i] != hero[s][i]]
    return {"n": len(chosen), "hero grade": hero_time, "nbgrader + HeroAutograde": ours_time,
            "plain nbgrader": plain_time, "front ends agree": all(hero[s][i] == ours[s][i] for s, i in items),
            "plain differs": plain_differs}


def isolation_costs(chosen):
    """What the sandbox costs: one worker's start-up (bwrap, confinement, torch import), which a
    sandbox per submission would pay for every submission, and a batch with and without bwrap."""
    from autograder.sandbox import WorkerPool

    startups = []
    for _ in range(3):
        start = time.perf_counter()
        pool = WorkerPool(size=1)
        pool.wait_ready()
        startups.append(time.perf_counter() - start)
        pool.close()
    bwrap_time, _ = timed(lambda: hero_scores(chosen, "bubblewrap"))
    process_time, _ = timed(lambda: hero_scores(chosen, "process"))
    return {"n": len(chosen), "startup": min(startups), "bubblewrap": bwrap_time, "process": process_time}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=26, help="submissions in the batch run (default 26, the first samples by name)")
    args = parser.parse_args()
    all_samples = samples.names(SAMPLES)
    batch = all_samples[: args.batch]
    with tempfile.TemporaryDirectory(prefix="hero-bench-") as scratch:
        rows = [measure(Path(scratch), ["reference"], "one"), measure(Path(scratch), batch, "batch")]
    costs = isolation_costs(batch)
    print(f"{'submissions':>11}  {'method':<26}{'wall s':>8}{'s / submission':>16}{'vs plain nbgrader':>19}")
    for row in rows:
        plain = row["plain nbgrader"] / row["n"]
        for method in ("hero grade", "nbgrader + HeroAutograde", "plain nbgrader"):
            per = row[method] / row["n"]
            print(f"{row['n']:>11}  {method:<26}{row[method]:>8.2f}{per:>16.3f}{plain / per:>18.1f}x")
        print(f"{'':>11}  hero grade and nbgrader + HeroAutograde agree on every item: {row['front ends agree']}")
        for student, item in row["plain differs"]:
            print(f"{'':>11}  plain nbgrader differs on {student}/{item} (in-kernel checks are not isolated)")
    n, per_bwrap = costs["n"], costs["bubblewrap"] / costs["n"]
    print(f"isolation: {n} submissions with hero grade: bubblewrap {costs['bubblewrap']:.2f} s "
          f"({per_bwrap:.3f} s each), process {costs['process']:.2f} s ({costs['process'] / n:.3f} s each): "
          f"the sandbox costs {costs['bubblewrap'] / costs['process']:.2f}x")
    print(f"one sandboxed worker starts in {costs['startup']:.2f} s (bwrap, confinement, torch import): a sandbox "
          f"per submission would cost about {costs['startup'] / per_bwrap:.1f}x the batch's time per submission")


if __name__ == "__main__":
    main()

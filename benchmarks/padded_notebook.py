"""What a notebook padded to a pathological shape costs the grader, through `hero grade` and
through `nbgrader autograde` (a course of its own, one student), beside the honest reference.

    .venv/bin/python benchmarks/padded_notebook.py                    # 800,000 empty cells (36.8 MB): red team, issue 38, W7
    .venv/bin/python benchmarks/padded_notebook.py --pad 1716000      # 79 MB, just under the file cap
    .venv/bin/python benchmarks/padded_notebook.py --kind lines --pad 15000000   # or outputs, metadata

The padded submission is chapter 5's reference sample with its notebook padded, written compact:
`cells` adds empty raw cells, `lines` a raw cell of that many one-character lines, `outputs` that
many empty outputs to a code cell, `metadata` that many empty objects to the notebook's metadata.
Each run is timed end to end (wall clock, start-up included) and its peak memory is the largest
resident set of the run and its children (wait4, as /usr/bin/time -v reports it). It prints each
run's time, peak memory, score and the reason the notebook was refused.
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

from autograder import nbgrader_glue, registry

ASSIGNMENT = registry.ASSIGNMENTS["ch05_block"]
NOTEBOOK = ASSIGNMENT.notebook_name


PADDING = {  # kind: (where the padding goes, one item of it)
    "cells": ("cells", '{"cell_type":"raw","metadata":{},"source":[]}'),
    "lines": ("source", '"\\n"'),
    "outputs": ("outputs", '{"output_type":"stream","name":"stdout","text":""}'),
    "metadata": ("metadata", "{}"),
}


def pad(notebook, kind, count):
    """The notebook's text, padded (built in a process of its own: a child's peak memory, as the
    kernel reports it, starts at its parent's peak)."""
    where, item = PADDING[kind]
    marker = "@@padding@@"
    if kind == "cells":
        notebook["cells"].insert(0, marker)
    elif kind == "lines":
        notebook["cells"].append({"cell_type": "raw", "metadata": {}, "source": [marker]})
    elif kind == "outputs":
        next(cell for cell in notebook["cells"] if cell["cell_type"] == "code")["outputs"] = [marker]
    else:
        notebook["metadata"]["padding"] = [marker]
    return json.dumps(notebook, ensure_ascii=False, separators=(",", ":")).replace(
        f'"{marker}"', ",".join([item] * count), 1)


def timed(command, cwd):
    """(seconds, peak resident MB, stdout) of `command`."""
    started = time.monotonic()
    proc = subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(command)} exited with {proc.returncode}")
    return time.monotonic() - started, usage.ru_maxrss / 1024, out


def through_hero_grade(folder, course=None):
    seconds, peak, out = timed([sys.executable, "-m", "autograder.cli", "grade", str(folder), "--assignment",
                                ASSIGNMENT.id, "--format", "json"], registry.REPO_ROOT)
    report = json.loads(out)
    return seconds, peak, report["score"], report["problems"]


def through_nbgrader(folder, course):
    from nbgrader.api import Gradebook

    shutil.copytree(registry.COURSE_DIR, course / registry.SOURCE_DIR)
    shutil.copy(registry.REPO_ROOT / "nbgrader_config.py", course)
    subprocess.run([sys.executable, "-m", "nbgrader", "generate_assignment", ASSIGNMENT.id, "--force",
                    "--log-level=ERROR"], cwd=course, check=True, capture_output=True)
    shutil.copytree(folder, course / "submitted" / "student" / ASSIGNMENT.id)
    seconds, peak, _ = timed([sys.executable, "-m", "nbgrader", "autograde", ASSIGNMENT.id, "--log-level=ERROR"], course)
    report = course / "autograded" / "student" / ASSIGNMENT.id / nbgrader_glue.REPORT_NAME
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as book:
        score = book.find_submission(ASSIGNMENT.id, "student").score
    return seconds, peak, score, json.loads(report.read_text(encoding="utf-8"))["problems"]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kind", choices=("cells", "lines", "outputs", "metadata"), default="cells")
    parser.add_argument("--pad", type=int, default=800_000, help="how many cells, lines, outputs or objects")
    parser.add_argument("--front-ends", default="hero grade,nbgrader autograde")
    parser.add_argument("--no-baseline", action="store_true", help="leave out the honest reference")
    parser.add_argument("--write", help=argparse.SUPPRESS)  # pad this notebook file in place, and exit
    args = parser.parse_args(argv)
    if args.write:
        path = Path(args.write)
        path.write_text(pad(json.loads(path.read_text(encoding="utf-8")), args.kind, args.pad), encoding="utf-8")
        return
    fronts = {"hero grade": through_hero_grade, "nbgrader autograde": through_nbgrader}
    with tempfile.TemporaryDirectory(prefix="hero-padded-") as scratch:
        scratch = Path(scratch)
        subprocess.run([sys.executable, "-m", "autograder.cli", "samples", str(scratch / "samples"), "--assignment",
                        ASSIGNMENT.id, "--no-hostile"], check=True, capture_output=True, cwd=registry.REPO_ROOT)
        reference = scratch / "samples" / ASSIGNMENT.id / "reference"
        padded = scratch / "padded"
        shutil.copytree(reference, padded)
        subprocess.run([sys.executable, __file__, "--write", str(padded / NOTEBOOK), "--kind", args.kind,
                        "--pad", str(args.pad)], check=True)
        size = (padded / NOTEBOOK).stat().st_size
        submissions = {f"{args.pad:,} {args.kind} ({size / 1e6:.1f} MB)": padded}
        if not args.no_baseline:
            submissions["the reference"] = reference
        for name, folder in submissions.items():
            for front in args.front_ends.split(","):
                course = Path(tempfile.mkdtemp(dir=scratch))
                seconds, peak, score, problems = fronts[front.strip()](folder, course)
                print(f"{name:32} {front.strip():20} {seconds:7.1f} s {peak:7.0f} MB   {score:g}/"
                      f"{sum(ASSIGNMENT.points().values()):g}   {'; '.join(problems)[:160]}", flush=True)


if __name__ == "__main__":
    main()

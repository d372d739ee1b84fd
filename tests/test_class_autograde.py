"""A whole class through `nbgrader autograde`: graded at once, resumable, exactly once.

The gradebook of the parallel path must equal, grade cell by grade cell, the one of the serial
path (nbgrader's loop grading one submission at a time, `parallel=False`), and a run killed
with SIGKILL at random moments (the driver, or one of its sandboxed workers), again and again,
must end with that same gradebook: no grade lost, none written twice, none given to another
student.
"""

import os
import random
import shutil
import sqlite3
import subprocess
import sys
import time

import psutil
import pytest
from nbgrader.api import Gradebook

from autograder import registry

from conftest import SAMPLES, needs_bubblewrap
from test_lab_ray import two_node_cluster  # noqa: F401,F811 (a fixture: a head and a second node, stopped after)

ASSIGNMENT = "ch05_block"
pytestmark = [pytest.mark.skipif(SAMPLES is None, reason="HERO_TEST_ASSIGNMENTS leaves ch05_block out"),
              needs_bubblewrap]
# eight students: the reference twice (one result serves both), faults of different exercises,
# a correct variant and the untouched stubs
CLASS = {"ada": "reference", "ben": "post_ln", "cy": "reference", "dee": "stubs", "eve": "across_batch",
         "fay": "affine_swapped", "gus": "activation_bypassed", "hal": "correct_" }


def nbgrader(root, *args, check=True, env=None):
    done = subprocess.run([sys.executable, "-m", "nbgrader", *args, "--log-level=ERROR"], cwd=root,
                          capture_output=True, text=True, env=env)
    assert not check or done.returncode == 0, done.stdout + done.stderr
    return done


def sample_named(prefix):
    return next(name for name in sorted(os.listdir(SAMPLES)) if name.startswith(prefix))


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    """A course root with the assignment generated and the class submitted; copied per test."""
    root = tmp_path_factory.mktemp("class")
    shutil.copytree(registry.COURSE_DIR, root / registry.SOURCE_DIR)
    shutil.copy(registry.REPO_ROOT / "nbgrader_config.py", root)
    nbgrader(root, "generate_assignment", ASSIGNMENT, "--force")
    for student, sample in CLASS.items():
        shutil.copytree(SAMPLES / sample_named(sample), root / "submitted" / student / ASSIGNMENT)
    return root


def course_copy(released, tmp_path, name):
    root = tmp_path / name
    shutil.copytree(released, root)
    return root


def gradebook(root):
    """Every grade cell's scores by (student, cell), and the row counts that would show a duplicate."""
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as book:
        scores = {(submission.student.id, grade.name): (grade.auto_score, grade.manual_score, grade.extra_credit)
                  for submission in book.assignment_submissions(ASSIGNMENT)
                  for grade in submission.notebooks[0].grades}
    with sqlite3.connect(root / "gradebook.db") as db:
        rows = {table: db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
                for table in ("submitted_assignment", "submitted_notebook", "grade")}
    return scores, rows


@pytest.fixture(scope="module")
def serial(released, tmp_path_factory):
    root = course_copy(released, tmp_path_factory.mktemp("serial"), "course")
    nbgrader(root, "autograde", ASSIGNMENT, "--HeroAutogradeConverter.parallel=False")
    return gradebook(root)


def test_parallel_gradebook_equals_the_serial_one(released, serial, tmp_path):
    root = course_copy(released, tmp_path, "course")
    done = nbgrader(root, "autograde", ASSIGNMENT)
    assert gradebook(root) == serial
    points = registry.ASSIGNMENTS[ASSIGNMENT].points()
    scores = serial[0]
    assert {cell: scores["ada", cell][0] for cell in points} == points  # the reference earns everything
    assert {cell: scores["ben", cell][0] for cell in points} == {**points, "block": 0.0}  # its fault's exercise alone
    # one line says what happened; two identical submissions were graded once
    summary = [line for line in done.stderr.splitlines() if line.startswith("autograde:")]
    assert len(summary) == 1 and "8 submission(s) found, 8 prepared" in summary[0], done.stderr
    assert "7 graded now, 1 from earlier results" in summary[0] or "8 graded now" in summary[0], summary
    # a second run finds everything recorded; --force reuses every kept result and changes nothing
    assert "8 submission(s) found, 0 prepared" in nbgrader(root, "autograde", ASSIGNMENT).stderr
    again = nbgrader(root, "autograde", ASSIGNMENT, "--force").stderr
    assert "0 graded now, 8 from earlier results" in again, again
    assert gradebook(root) == serial


def test_bad_submissions_cost_only_themselves(released, serial, tmp_path):
    """One notebook nbgrader cannot read (skipped and named), one submission carrying the grader's
    own file names (refused, named, and graded like the rest): the class's gradebook is the same."""
    root = course_copy(released, tmp_path, "course")
    broken = root / "submitted" / "zed" / ASSIGNMENT
    broken.mkdir(parents=True)
    (broken / f"{ASSIGNMENT}.ipynb").write_text("{ not json", encoding="utf-8")
    forger = root / "submitted" / "ivy" / ASSIGNMENT
    shutil.copytree(SAMPLES / "reference", forger)
    (forger / ".hero_recorded").write_text("0" * 64 + "\n", encoding="utf-8")
    (forger / "hero_report.json").write_text('{"score": 1000}', encoding="utf-8")
    done = nbgrader(root, "autograde", ASSIGNMENT, check=False)
    assert "1 skipped" in done.stderr and "Skipped" in done.stderr, done.stderr
    scores = gradebook(root)[0]
    assert {key: value for key, value in scores.items() if key[0] != "ivy"} == serial[0]
    assert {cell: scores["ivy", cell] for student, cell in scores if student == "ivy"} == \
        {cell: value for (student, cell), value in serial[0].items() if student == "ada"}
    report = (root / "autograded" / "ivy" / ASSIGNMENT / "hero_report.json").read_text(encoding="utf-8")
    assert "the grader's own file name" in report and '"score": 1000' not in report


def _kill(process, target, rng):
    """SIGKILL the nbgrader driver, or one of the sandboxed workers it started."""
    if target == "worker":
        workers = [child for child in psutil.Process(process.pid).children(recursive=True)
                   if "worker.py" in " ".join(child.cmdline())]
        if workers:
            rng.choice(workers).kill()
            return "worker"
    process.kill()
    return "driver"


def test_killed_at_random_moments_the_run_resumes_to_the_same_gradebook(released, serial, tmp_path):
    """Each round starts `nbgrader autograde` (no --force, as an instructor would rerun it) and
    kills it after a random delay; then one run is left to finish.  Kills land in every stage:
    preparing (nbgrader's own writes), grading, recording."""
    root = course_copy(released, tmp_path, "course")
    rng = random.Random(20261204)
    command = [sys.executable, "-m", "nbgrader", "autograde", ASSIGNMENT, "--log-level=ERROR"]
    killed = []
    for round_ in range(6):
        process = subprocess.Popen(command, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        time.sleep(rng.uniform(2.0, 14.0))
        if process.poll() is None:
            target = _kill(process, "worker" if round_ % 3 == 2 else "driver", rng)
            killed.append(target)
        process.wait(timeout=600)
        process.stderr.close()
    assert killed, "no run was killed: the delays are too long for this machine"
    final = nbgrader(root, "autograde", ASSIGNMENT)
    assert gradebook(root) == serial, (killed, final.stderr)
    # and every autograded folder is marked recorded under its own student's key
    for student in CLASS:
        assert (root / "autograded" / student / ASSIGNMENT / ".hero_recorded").is_file()


def test_on_a_two_node_ray_cluster_the_gradebook_is_the_local_one(released, serial, tmp_path, two_node_cluster):
    """Each node's Grader grades with its own sandboxed pool; only bytes and report JSON cross Ray."""
    address, env = two_node_cluster
    root = course_copy(released, tmp_path, "course")
    done = nbgrader(root, "autograde", ASSIGNMENT, f"--HeroAutogradeConverter.ray_address={address}", env=env)
    assert "8 graded now" in done.stderr, done.stderr
    assert gradebook(root) == serial

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
import signal
import sqlite3
import subprocess
import sys
import time

import psutil
import pytest
from nbgrader.api import Gradebook

from autograder import registry

from conftest import SAMPLES, needs_bubblewrap
from servers import postgres_server  # noqa: F401 (a fixture: a throw-away PostgreSQL, stopped after)


ASSIGNMENT = "ch05_block"
pytestmark = [pytest.mark.skipif(SAMPLES is None, reason="HERO_TEST_ASSIGNMENTS leaves ch05_block out"),
              needs_bubblewrap]
# eight students: the reference twice (one result serves both), faults of different exercises,
# a correct variant and the untouched stubs
CLASS = {"ada": "reference", "ben": "post_ln", "cy": "reference", "dee": "stubs", "eve": "across_batch",
         "fay": "affine_swapped", "gus": "activation_bypassed", "hal": "correct_" }


def nbgrader(root, *args, check=True, env=None, log_level="ERROR"):
    done = subprocess.run([sys.executable, "-m", "nbgrader", *args, f"--log-level={log_level}"], cwd=root,
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


def gradebook(root, name="gradebook.db"):
    """Every grade cell's scores by (student, cell), and the row counts that would show a duplicate."""
    with Gradebook(f"sqlite:///{root / name}") as book:
        scores = {(submission.student.id, grade.name): (grade.auto_score, grade.manual_score, grade.extra_credit)
                  for submission in book.assignment_submissions(ASSIGNMENT)
                  for grade in submission.notebooks[0].grades}
    with sqlite3.connect(root / name) as db:
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
    # recorded means recorded in the gradebook: autograded folders and kept results on disk, but a
    # new gradebook (another SQLite file here; PostgreSQL is the same code) holds nothing yet, so
    # every submission is recorded there, from its kept result, and each message says so
    other = f"--CourseDirectory.db_url=sqlite:///{root / 'other.db'}"
    nbgrader(root, "generate_assignment", ASSIGNMENT, "--force", other)
    switched = nbgrader(root, "autograde", ASSIGNMENT, other, log_level="WARN").stderr
    assert "8 submission(s) found, 8 prepared" in switched and "0 graded now, 8 from earlier results" in switched, \
        switched
    assert switched.count("this gradebook does not hold its grades") == 8, switched
    assert switched.count("its kept result is recorded now (not graded again)") == 8, switched
    assert "it is graded now" not in switched, switched
    assert gradebook(root, "other.db") == serial
    assert "8 submission(s) found, 0 prepared" in nbgrader(root, "autograde", ASSIGNMENT, other).stderr


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
    # and the gradebook marks every submission recorded, each under its own student's key
    with sqlite3.connect(root / "gradebook.db") as db:
        keys = dict(db.execute("SELECT student_id, result_key FROM hero_recorded WHERE assignment_id = ?",
                               (ASSIGNMENT,)).fetchall())
    assert set(keys) == set(CLASS) and len(set(keys.values())) == len(CLASS) - 1  # ada and cy: the same bytes


def test_on_a_two_node_ray_cluster_the_gradebook_is_the_local_one(released, serial, tmp_path, two_node_cluster):
    """Each node's Grader grades with its own sandboxed pool; only bytes and report JSON cross Ray."""
    address, env = two_node_cluster
    root = course_copy(released, tmp_path, "course")
    done = nbgrader(root, "autograde", ASSIGNMENT, f"--HeroAutogradeConverter.ray_address={address}", env=env)
    assert "8 graded now" in done.stderr, done.stderr
    assert gradebook(root) == serial


# --- stopping a run, one run at a time, recorded means recorded in the gradebook ---

def slow_class(released, tmp_path):
    """A course copy of two students, one of whose package loops at import; with an exercise's
    CPU time raised to 10 minutes its grading outlasts any test, so a run is surely mid-way."""
    root = course_copy(released, tmp_path, "course")
    for student in CLASS:
        if student != "ada":
            shutil.rmtree(root / "submitted" / student)
    looping = root / "submitted" / "zoe" / ASSIGNMENT
    shutil.copytree(SAMPLES / "reference", looping)
    model = looping / "hero_transformer" / "model.py"
    model.write_text("while True:\n    pass\n" + model.read_text(encoding="utf-8"), encoding="utf-8")
    with open(root / "nbgrader_config.py", "a", encoding="utf-8") as config:
        config.write("\nc.HeroAutograde.timeout = 600.0\n")
    return root


def grading_tree(process):
    """The process and everything it started, once a sandboxed worker runs the looping task (a
    task past 5 s of CPU: an honest one of this assignment takes a fraction of that)."""
    deadline = time.monotonic() + 600  # starting the workers on a loaded machine; not a measure
    while time.monotonic() < deadline:
        assert process.poll() is None, "the run ended before it was stopped"
        try:
            tree = [psutil.Process(process.pid)] + psutil.Process(process.pid).children(recursive=True)
            tasks = [task for child in tree[1:] if "worker.py" in " ".join(child.cmdline())
                     for task in child.children()]
            if any(sum(task.cpu_times()[:2]) >= 5 for task in tasks):
                return tree + tasks
        except psutil.NoSuchProcess:  # a task that ended meanwhile
            pass
        time.sleep(0.5)
    raise AssertionError("the looping task did not start")


def marked(mark):
    """Every process still running whose environment carries `mark` (all this run started)."""
    found = []
    for candidate in psutil.process_iter():
        try:
            if candidate.environ().get("HERO_TEST_RUN") == mark:
                found.append(candidate)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            pass
    return found


def stop_all(processes):
    for leftover in processes:
        try:
            leftover.kill()
        except psutil.NoSuchProcess:
            pass


@pytest.mark.parametrize("stop", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT], ids=lambda number: number.name)
def test_stopping_hero_autograde_stops_every_process_it_started(released, tmp_path, stop):
    """SIGKILL (no handler can see it), SIGTERM (a plain `kill`) and SIGINT (Ctrl-C)."""
    root = slow_class(released, tmp_path)
    mark = f"stop-{os.getpid()}-{time.time_ns()}"
    hero = subprocess.Popen([sys.executable, "-m", "autograder.cli", "autograde", ASSIGNMENT, "--root", str(root)],
                            cwd=registry.REPO_ROOT, env={**os.environ, "HERO_TEST_RUN": mark},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    tree = []
    try:
        tree = grading_tree(hero)
        assert any("nbgrader" in " ".join(child.cmdline()) for child in tree[1:]), tree
        hero.send_signal(stop)
        hero.wait()
        # the kernel's promise (PR_SET_PDEATHSIG) and the workers' closed control sockets act at once;
        # the wait is only a bound for a loaded machine, and before the fix the loop keeps them alive
        _, alive = psutil.wait_procs(tree[1:], timeout=120)
        assert not alive, [" ".join(p.cmdline())[:200] for p in alive]
        assert not marked(mark)
    finally:
        stop_all(tree[1:] + marked(mark))
        hero.wait()


def test_a_second_run_is_refused_while_one_grades_and_proceeds_after_a_crash(released, tmp_path):
    root = slow_class(released, tmp_path)
    first = subprocess.Popen([sys.executable, "-m", "nbgrader", "autograde", ASSIGNMENT, "--log-level=ERROR"],
                             cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    tree = []
    try:
        tree = grading_tree(first)
        second = nbgrader(root, "autograde", ASSIGNMENT, "--student=ada", check=False)
        assert second.returncode == 1, second.stderr
        assert "another autograde run is grading 1 of these submissions into this gradebook (ada/ch05_block)" \
            in second.stderr, second.stderr
        assert "this run grades nothing" in second.stderr
        first.kill()  # a crash: its locks go with it
        first.wait()
        _, alive = psutil.wait_procs(tree[1:], timeout=120)  # its workers and their tasks end with it
        assert not alive, [" ".join(p.cmdline())[:200] for p in alive]
        after = nbgrader(root, "autograde", ASSIGNMENT, "--student=ada")
        assert "another autograde" not in after.stderr, after.stderr
        points = registry.ASSIGNMENTS[ASSIGNMENT].points()
        assert {cell: score[0] for (student, cell), score in gradebook(root)[0].items() if student == "ada"} == points
    finally:
        stop_all(tree[1:])
        first.kill()
        first.wait()


def test_run_locks_refuse_a_second_holder_and_die_with_theirs(tmp_path, postgres_server):  # noqa: F811
    """The lock itself, SQLite and PostgreSQL: held per submission; another holder of one of them
    is refused whole (it keeps none); closing (what a crash does) releases them."""
    from autograder.nbgrader_glue import RunLock

    class_ = [str(tmp_path / "submitted" / student / ASSIGNMENT) for student in ("ada", "ben", "cy")]
    for url in (f"sqlite:///{tmp_path / 'gradebook.db'}", postgres_server.database("locks")):
        first, second = RunLock(url), RunLock(url)
        try:
            assert first.supported and first.acquire(class_[:2]) == []
            assert second.acquire(class_[1:]) == class_[1:2]  # ben is held: refused, and cy not kept
            third = RunLock(url)
            assert third.acquire(class_[2:]) == []  # cy was not kept by the refused one
            third.close()
            first.close()
            assert second.acquire(class_) == []
        finally:
            first.close()
            second.close()


def test_a_course_graded_into_sqlite_is_recorded_whole_into_postgresql(released, tmp_path,
                                                                       postgres_server):  # noqa: F811
    """The issue's switch: a course already graded into SQLite, then autograded into PostgreSQL."""
    root = course_copy(released, tmp_path, "course")
    for student in CLASS:
        if student not in ("ada", "ben"):
            shutil.rmtree(root / "submitted" / student)
    nbgrader(root, "autograde", ASSIGNMENT)
    url = postgres_server.database("switched")
    option = f"--CourseDirectory.db_url={url}"
    nbgrader(root, "generate_assignment", ASSIGNMENT, "--force", option)
    switched = nbgrader(root, "autograde", ASSIGNMENT, option, log_level="WARN").stderr
    assert "2 submission(s) found, 2 prepared" in switched and "0 graded now, 2 from earlier results" in switched, \
        switched
    assert switched.count("its kept result is recorded now (not graded again)") == 2, switched
    with Gradebook(url) as book:
        in_postgres = {(submission.student.id, grade.name): (grade.auto_score, grade.manual_score, grade.extra_credit)
                       for submission in book.assignment_submissions(ASSIGNMENT)
                       for grade in submission.notebooks[0].grades}
    assert in_postgres == gradebook(root)[0]
    assert "2 submission(s) found, 0 prepared" in nbgrader(root, "autograde", ASSIGNMENT, option).stderr

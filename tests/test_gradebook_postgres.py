"""nbgrader's gradebook in PostgreSQL (`CourseDirectory.db_url`), against a real server that
tests/servers.py starts for this module (a throw-away cluster, an unprivileged user, a Unix socket
only) and always stops and removes.

Through the real `nbgrader` commands and this course's configuration:
- `nbgrader autograde` into PostgreSQL gives every grade cell of every student the score it gets in
  the default SQLite gradebook;
- several `nbgrader autograde --student X` processes at once (disjoint students, and one student
  graded by two course roots at the same time) lose no grade and duplicate none;
- `nbgrader generate_feedback` and `nbgrader export` read their scores from PostgreSQL.
Each check is also shown to fail on a gradebook altered the way it guards against.
"""

import concurrent.futures
import contextlib
import csv
import html
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import sqlalchemy
from nbgrader.api import Gradebook

from autograder import registry

from conftest import SAMPLES
from servers import postgres_server  # noqa: F401 (the fixture)

TESTS = Path(__file__).parent

ASSIGNMENT = "ch05_block"
COURSE_ID = "hero_transformer"  # course/nbgrader_config.py's; another id would add a course row
STUDENTS = ("reference", "stubs", "post_ln", "sample_variance")  # 21, 0, 18 and 18 points, lost in other cells
TWICE = "reference"  # graded by two course roots at once in the parallel test
TABLES = ("student", "submitted_assignment", "submitted_notebook", "grade", "comment")

pytestmark = [pytest.mark.skipif(SAMPLES is None, reason="HERO_TEST_ASSIGNMENTS leaves ch05_block out"),
              # nbgrader's own session handling when a test adds rows (as course/nbgrader_config.py says)
              pytest.mark.filterwarnings("ignore:.*not in session.*")]


def nbgrader(root, *args, db_url=None, check=True):
    """One real nbgrader command in course root `root`, against `db_url` (None: the default SQLite gradebook)."""
    extra = [f"--CourseDirectory.db_url={db_url}"] if db_url else []
    done = subprocess.run([sys.executable, "-m", "nbgrader", *args, *extra, "--log-level=ERROR"], cwd=root,
                          capture_output=True, text=True, timeout=900)
    if check:
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done


@contextlib.contextmanager
def gradebook(url):
    """nbgrader's Gradebook, its connections closed afterwards (a database with an open connection
    cannot serve as a template)."""
    book = Gradebook(url, COURSE_ID)
    try:
        yield book
    finally:
        book.close()
        book.engine.dispose()


def cell_scores(url):
    """{student: {grade cell: score}} as nbgrader computes it (a manual score overrides the automatic one)."""
    with gradebook(url) as book:
        return {submission.student.id: {grade.name: grade.score for notebook in submission.notebooks
                                        for grade in notebook.grades}
                for submission in book.assignment_submissions(ASSIGNMENT)}


def differences(found, expected):
    """Each (student, cell) whose score differs, or that one side lacks, as a line."""
    lines = []
    for student in sorted(set(found) | set(expected)):
        mine, theirs = found.get(student), expected.get(student)
        if mine is None or theirs is None:
            lines.append(f"{student}: {'missing' if mine is None else 'unexpected'}")
            continue
        lines += [f"{student} {cell}: {mine.get(cell)} != {theirs.get(cell)}"
                  for cell in sorted(set(mine) | set(theirs)) if mine.get(cell) != theirs.get(cell)]
    return lines


def row_counts(url):
    engine = sqlalchemy.create_engine(url)
    try:
        with engine.connect() as connection:
            return {table: connection.execute(sqlalchemy.text(f"SELECT count(*) FROM {table}")).scalar()
                    for table in (*TABLES, "grade_cells", "solution_cells")}
    finally:
        engine.dispose()


def gradebook_problems(url, expected):
    """What is wrong with the gradebook at `url` after grading the students of `expected`
    ({student: {cell: score}}): a row missing or doubled in any table a grading writes, a score
    missing or differing."""
    counts = row_counts(url)
    students = len(expected)
    wanted = {"student": students, "submitted_assignment": students, "submitted_notebook": students,
              "grade": students * counts["grade_cells"], "comment": students * counts["solution_cells"]}
    problems = [f"{table}: {counts[table]} rows, {rows} expected" for table, rows in wanted.items()
                if counts[table] != rows]
    with gradebook(url) as book:  # nbgrader counts a grade with neither score as 0: look at both
        problems += [f"{submission.student.id} {grade.name}: no score"
                     for submission in book.assignment_submissions(ASSIGNMENT) for notebook in submission.notebooks
                     for grade in notebook.grades if grade.auto_score is None and grade.manual_score is None]
    return problems + differences(cell_scores(url), expected)


def copy_database(server, source, name):
    """A copy of database `source` (PostgreSQL's template copy), returned as its URL."""
    connection = server.connect()
    try:
        connection.autocommit = True
        with connection.cursor() as cursor:
            cursor.execute(f'CREATE DATABASE "{name}" TEMPLATE "{source}"')
    finally:
        connection.close()
    return server.url(name)


def set_score(url, student, cell, score):
    with gradebook(url) as book:
        book.find_grade(cell, ASSIGNMENT, ASSIGNMENT, student).manual_score = score
        book.db.commit()


@pytest.fixture(scope="module")
def course(tmp_path_factory, postgres_server):  # noqa: F811
    """A course root, assignment generated into both gradebooks (SQLite's gradebook.db and the
    PostgreSQL database `generated`, the template of every other), the students' submissions in
    submitted/; graded only in copies."""
    base = tmp_path_factory.mktemp("gradebooks")
    root = base / "generated"
    shutil.copytree(registry.COURSE_DIR, root / registry.SOURCE_DIR)
    shutil.copy(registry.REPO_ROOT / "nbgrader_config.py", root)
    nbgrader(root, "generate_assignment", ASSIGNMENT, "--force")
    nbgrader(root, "generate_assignment", ASSIGNMENT, "--force", db_url=postgres_server.database("generated"))
    for student in STUDENTS:
        shutil.copytree(SAMPLES / student, root / "submitted" / student / ASSIGNMENT)

    def copy(name):
        return shutil.copytree(root, base / name, symlinks=True)
    return copy


@pytest.fixture(scope="module")
def serial(course, postgres_server):  # noqa: F811
    """Every student graded by one `nbgrader autograde`, into SQLite and into PostgreSQL."""
    sqlite_root, postgres_root = course("serial-sqlite"), course("serial-postgres")
    postgres_url = copy_database(postgres_server, "generated", "serial")
    # the two runs share nothing (course roots, gradebooks), so they may run side by side
    with concurrent.futures.ThreadPoolExecutor(2) as threads:
        for done in [threads.submit(nbgrader, sqlite_root, "autograde", ASSIGNMENT),
                     threads.submit(nbgrader, postgres_root, "autograde", ASSIGNMENT, db_url=postgres_url)]:
            done.result()
    return {"sqlite root": sqlite_root, "sqlite": f"sqlite:///{sqlite_root / 'gradebook.db'}",
            "postgres root": postgres_root, "postgres": postgres_url}


def test_postgres_gradebook_holds_the_scores_sqlite_holds(serial, postgres_server):  # noqa: F811
    in_sqlite, in_postgres = cell_scores(serial["sqlite"]), cell_scores(serial["postgres"])
    assert sorted(in_sqlite) == sorted(STUDENTS)
    assert {student: sum(cells.values()) for student, cells in in_sqlite.items()} == {
        "reference": 21, "stubs": 0, "post_ln": 18, "sample_variance": 18}
    assert differences(in_postgres, in_sqlite) == []
    assert gradebook_problems(serial["postgres"], in_sqlite) == []

    # the comparison sees one cell changed in PostgreSQL
    altered = copy_database(postgres_server, "serial", "serial-altered")
    set_score(altered, "post_ln", "near_constant_output", 0)
    assert differences(cell_scores(altered), in_sqlite) == ["post_ln near_constant_output: 0.0 != 1.0"]


def test_parallel_autograde_loses_and_doubles_no_grade(course, serial, postgres_server):  # noqa: F811
    """One process per student, all at once, plus a second course root grading TWICE at the same
    time (two graders sharing one gradebook), each writing to the same PostgreSQL database."""
    expected = cell_scores(serial["sqlite"])
    url = copy_database(postgres_server, "generated", "parallel")
    first, second = course("parallel-1"), course("parallel-2")
    runs = [(first, student) for student in STUDENTS] + [(second, TWICE)]
    sessions, stop = [], threading.Event()

    def watch():  # how many connections the graders hold on the gradebook at once
        connection = postgres_server.connect()
        connection.autocommit = True
        with connection.cursor() as cursor:
            while not stop.wait(0.2):
                cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = 'parallel'")
                sessions.append(cursor.fetchone()[0])
        connection.close()

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        processes = [subprocess.Popen([sys.executable, "-m", "nbgrader", "autograde", ASSIGNMENT, "--student", student,
                                       f"--CourseDirectory.db_url={url}", "--log-level=ERROR"],
                                      cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                     for root, student in runs]
        outputs = [process.communicate(timeout=900)[0] for process in processes]
    finally:
        stop.set()
        watcher.join()
    # The two graders of TWICE may both find no student or submission row and both insert one:
    # nbgrader's find-then-add (Gradebook.update_or_create_*) is not atomic. PostgreSQL's unique
    # constraint refuses the second insert; that grader fails loudly, writes nothing, and a rerun
    # completes it. Anything else failing is a failure of this test.
    for (root, student), process, output in zip(runs, processes, outputs):
        if process.returncode:
            assert student == TWICE and "UniqueViolation" in output, output[-5000:]
            print(f"\n{student}: two graders raced to create its row; the loser failed loudly:\n"
                  + "\n".join(line for line in output.splitlines() if "UniqueViolation" in line or "DETAIL" in line)[:1500])
            nbgrader(root, "autograde", ASSIGNMENT, "--student", student, "--force", db_url=url)
    print(f"\nparallel autograde: {len(runs)} processes, at most {max(sessions)} connections to the gradebook at once;"
          f" rows {row_counts(url)}")
    assert max(sessions) >= 2, sessions  # the writers overlapped
    assert gradebook_problems(url, expected) == []

    # a lost update, a lost submission and a doubled one are each seen
    lost_grade = copy_database(postgres_server, "parallel", "parallel-lost-grade")
    with gradebook(lost_grade) as book:
        book.find_grade("block", ASSIGNMENT, ASSIGNMENT, "reference").auto_score = None
        book.db.commit()
    assert gradebook_problems(lost_grade, expected) == ["reference block: no score", "reference block: 0.0 != 3.0"]
    lost_submission = copy_database(postgres_server, "parallel", "parallel-lost-submission")
    with gradebook(lost_submission) as book:
        book.remove_submission(ASSIGNMENT, "post_ln")
    problems = gradebook_problems(lost_submission, expected)
    assert "submitted_assignment: 3 rows, 4 expected" in problems and "post_ln: missing" in problems
    doubled = copy_database(postgres_server, "parallel", "parallel-doubled")
    with gradebook(doubled) as book:
        book.add_student("reference-again")
        book.add_submission(ASSIGNMENT, "reference-again")
    problems = gradebook_problems(doubled, expected)
    assert "submitted_assignment: 5 rows, 4 expected" in problems and "reference-again: unexpected" in problems


FEEDBACK_CELL = re.compile(r"<code>([^<]+)</code></a> \(Score: ([0-9.]+) / ([0-9.]+)\)")


def feedback_scores(root, student):
    page = (root / "feedback" / student / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text(encoding="utf-8")
    return {html.unescape(cell): float(score) for cell, score, _ in FEEDBACK_CELL.findall(page)}


def exported(root, url, name):
    nbgrader(root, "export", "--to", name, db_url=url)
    with open(root / name, newline="", encoding="utf-8") as handle:
        return {row["student_id"]: (float(row["raw_score"]), float(row["score"]), float(row["max_score"]))
                for row in csv.DictReader(handle) if row["assignment"] == ASSIGNMENT}


def test_feedback_and_export_read_postgres(serial, postgres_server):  # noqa: F811
    root, url = serial["postgres root"], serial["postgres"]
    expected = cell_scores(serial["sqlite"])
    nbgrader(root, "generate_feedback", ASSIGNMENT, db_url=url)
    for student in STUDENTS:
        assert feedback_scores(root, student) == expected[student], student
    totals = exported(root, url, "grades.csv")
    assert totals == {student: (sum(cells.values()),) * 2 + (21.0,) for student, cells in expected.items()}
    assert totals == exported(serial["sqlite root"], None, "grades.csv")

    # both read the database they are given: one score changed there shows on the page and in the export
    altered = copy_database(postgres_server, "serial", "feedback-altered")
    set_score(altered, "reference", "block", 1)
    nbgrader(root, "generate_feedback", ASSIGNMENT, "--student", "reference", "--force", db_url=altered)
    assert feedback_scores(root, "reference") == dict(expected["reference"], block=1.0)
    assert exported(root, altered, "altered.csv")["reference"] == (19.0, 19.0, 21.0)


FAILING_TEST = """
import json, os, sys
sys.path.insert(0, {tests!r})
from servers import postgres_server  # noqa: F401


def test_fails(postgres_server):
    pid = int((postgres_server.data / "postmaster.pid").read_text().split()[0])
    postgres_server.database("doomed")
    with open({record!r}, "w") as handle:
        json.dump({{"folder": str(postgres_server.folder), "pid": pid}}, handle)
    assert False, "this test fails on purpose"
"""


def test_the_server_is_stopped_and_removed_when_a_test_fails(tmp_path):
    """The fixture's promise, pass or fail: a test that fails while the server runs leaves no
    server process and no folder behind."""
    record = tmp_path / "server.json"
    (tmp_path / "test_doomed.py").write_text(FAILING_TEST.format(tests=str(TESTS), record=str(record)),
                                             encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
                           "--rootdir", str(tmp_path), str(tmp_path / "test_doomed.py")],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    if "skipped" in done.stdout and not record.exists():
        pytest.skip(done.stdout.strip().splitlines()[-1])
    assert done.returncode == 1 and "this test fails on purpose" in done.stdout, done.stdout + done.stderr
    server = json.loads(record.read_text(encoding="utf-8"))
    assert not os.path.exists(server["folder"])
    assert not postgres_running(server["pid"])


def postgres_running(pid):
    """Whether `pid` is a live postgres process (a zombie waiting for init to reap it is not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
    except (OSError, IndexError):
        return False
    return state != "Z" and b"postgres" in command

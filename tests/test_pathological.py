"""Pathological submissions cost only themselves, and every limit says what it refused.

A class run must end whatever one submission holds (issue 38, findings 5 and 9): tens of
thousands of folders, folders nested thousands deep, more files than any limit, a sparse file of
a terabyte.  The walk that reads a submission holds two descriptors at most and names every
bound it meets (autograder/safefiles.py); a task that cannot even start (no descriptor for its
pipes) costs that task and gives its worker back (autograder/sandbox.py); a class graded through
nbgrader's parallel path and through Ray, with those submissions among honest ones, ends with
every honest student graded exactly as alone and each bad one scored with a clear message.
"""

import errno
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

from autograder import engine, registry, safefiles, sandbox

from conftest import SAMPLES, needs_bubblewrap
from test_class_autograde import ASSIGNMENT, course_copy, gradebook, released  # noqa: F401 (a fixture)


# seconds: far past any honest run here; a run still going then is hung, and fails the test
HANG = float(os.environ.get("HERO_TEST_HANG", 900))
HONEST = ("ada", "ben", "dee")  # the reference, a fault (post_ln), the untouched stubs
DEEP = 2000


# --- the walk ---------------------------------------------------------------------------------

def _walk_in_child(folder, nofile, *args):
    """Folder(folder).files("", "", *args) in a child whose descriptor limit is `nofile`."""
    script = ("import json, resource, sys\n"
              f"resource.setrlimit(resource.RLIMIT_NOFILE, ({nofile}, {nofile}))\n"
              "from autograder import safefiles\n"
              "with safefiles.Folder(sys.argv[1]) as folder:\n"
              f"    print(json.dumps(folder.files('', '', *{args!r})))\n")
    return subprocess.run([sys.executable, "-c", script, str(folder)], capture_output=True, text=True,
                          cwd=registry.REPO_ROOT, timeout=HANG)


def make_deep(folder, depth, leaf="x.py"):
    """`depth` nested folders d/d/.../d under `folder` (past PATH_MAX: made one level at a time
    from an open descriptor), with a file `leaf` at the bottom."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(depth):
        os.mkdir("d", dir_fd=fd)
        inner = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = inner
    os.close(os.open(leaf, os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))
    os.close(fd)


def remove_tree(folder):
    """rm -rf: shutil.rmtree recurses once per level and stops at a tree thousands deep."""
    subprocess.run(["rm", "-rf", "--", str(folder)], check=True)


@pytest.fixture
def scratch(tmp_path):
    """A folder in memory where there is one (/dev/shm): on a disk that discards on delete, the
    tens of thousands of folders cost minutes to remove; removed after the test, pass or fail."""
    shm = Path("/dev/shm")
    folder = Path(tempfile.mkdtemp(prefix="hero-pathological-", dir=shm)) if os.access(shm, os.W_OK) else tmp_path
    os.chmod(folder, 0o755)
    yield folder
    remove_tree(folder)


def test_a_walk_holds_no_descriptor_per_pending_folder(scratch):
    """3,000 sibling folders walked with 64 descriptors: the old walk kept one open per pending
    folder and failed with EMFILE (in the class run, the grading threads' pipes failed too)."""
    for index in range(3000):
        (scratch / "junk" / f"d{index:04d}").mkdir(parents=True)
    (scratch / "a.py").write_text("", encoding="utf-8")
    done = _walk_in_child(scratch, 64, 10)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout) == [["a.py"], []]


def test_every_bound_of_the_walk_is_named(tmp_path):
    make_deep(tmp_path, DEEP)
    for index in range(30):
        (tmp_path / "many" / f"f{index:02d}.py").parent.mkdir(exist_ok=True)
        (tmp_path / "many" / f"f{index:02d}.py").write_text("", encoding="utf-8")
    try:
        with safefiles.Folder(tmp_path) as folder:
            # too deep: that folder is refused and named, the rest is read
            found, refused = folder.files("", "", 100)
            assert len(found) == 30 and refused == [
                "/".join(["d"] * (safefiles.MAX_WALK_DEPTH + 1))
                + f" is nested more than {safefiles.MAX_WALK_DEPTH} folders deep; nothing inside it was read"]
            # more files than asked for: never a silent cut
            found, refused = folder.files("many", ".py", 10)
            assert len(found) == 10 and refused == [
                "many holds more than 10 files to read; many/f10.py and the files after it were not read"]
            with pytest.raises(safefiles.TooLarge, match="more than 10 files"):
                folder.files("many", ".py", 10, strict=True)
            # more entries than the walk may visit, files kept or not
            with pytest.raises(safefiles.TooLarge, match="holds more than 20 files and folders"):
                folder.files("", ".ipynb", 100, strict=True, max_entries=20)
            # only what `keep` accepts counts toward the limit
            found, refused = folder.files("", "", 5, keep=lambda relpath: relpath.endswith("f07.py"))
            assert found == ["many/f07.py"] and refused[:1] == [
                f"{'/'.join(['d'] * (safefiles.MAX_WALK_DEPTH + 1))} is nested more than "
                f"{safefiles.MAX_WALK_DEPTH} folders deep; nothing inside it was read"]
    finally:
        remove_tree(tmp_path / "d")


def test_a_package_over_the_limit_is_refused_whole(tmp_path):
    package = tmp_path / registry.PACKAGE
    package.mkdir()
    for index in range(engine.MAX_FILES + 1):
        (package / f"m{index:03d}.py").write_text("", encoding="utf-8")
    problems, refused = [], []
    with safefiles.Folder(tmp_path) as folder:
        assert engine.read_package(folder, problems, refused) == {}
    assert problems == refused and len(problems) == 1
    assert problems[0].startswith(f"{registry.PACKAGE}/ was not graded: {registry.PACKAGE} holds more than "
                                  f"{engine.MAX_FILES} files")


# --- the pool ---------------------------------------------------------------------------------

def _in_thread(call):
    """call() in a thread; (finished, its result or exception).  A call still running after HANG
    seconds is a hang: the test fails instead of blocking."""
    box = {}

    def target():
        try:
            box["result"] = call()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            box["result"] = exc
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(HANG)
    return not thread.is_alive(), box.get("result")


@pytest.fixture
def lone_pool():
    """A pool of one worker: a worker lost for good would stop it at once."""
    pool = sandbox.WorkerPool(size=1)
    yield pool
    pool.close()


@needs_bubblewrap
@pytest.mark.skipif(SAMPLES is None, reason="HERO_TEST_ASSIGNMENTS leaves ch05_block out")
def test_a_task_without_descriptors_for_its_pipes_costs_only_itself(lone_pool, monkeypatch):
    """os.pipe fails with EMFILE for both tries of one task: that item is reported as the
    grader's failure, and the pool's one worker grades the rest, and the next submission with
    descriptors past 1023 in use."""
    alone = engine.grade(SAMPLES / "reference", ASSIGNMENT, pool=lone_pool)
    real_pipe, calls = os.pipe, []

    def pipe():
        calls.append(1)
        if len(calls) <= 2:  # the task's first try, then the engine's one retry
            raise OSError(errno.EMFILE, os.strerror(errno.EMFILE))
        return real_pipe()
    monkeypatch.setattr(sandbox.os, "pipe", pipe)
    finished, report = _in_thread(lambda: engine.grade(SAMPLES / "reference", ASSIGNMENT, pool=lone_pool))
    assert finished, "the pool stopped serving: its worker was never given back"
    assert isinstance(report, engine.Report), report
    lost = [item for item in report.items if item.grader_fault]
    assert len(lost) == 1 and "could not start this task" in lost[0].feedback_en, lost
    assert "Too many open files" in lost[0].feedback_en and not report.complete
    kept = {item.id: (item.status, item.score) for item in report.items if not item.grader_fault}
    assert kept == {item.id: (item.status, item.score) for item in alone.items if item.id != lost[0].id}
    # and with descriptors numbered past 1023 (a grader holding many files open): select() refused
    # those ("filedescriptor out of range"), which is how the class run hung on the old code
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
    try:
        finished, again = _in_thread(lambda: engine.grade(SAMPLES / "reference", ASSIGNMENT, pool=lone_pool))
    finally:
        for fd in held:
            os.close(fd)
    assert finished and isinstance(again, engine.Report) and again.score == alone.score == alone.max_score, again


@needs_bubblewrap
@pytest.mark.skipif(SAMPLES is None, reason="HERO_TEST_ASSIGNMENTS leaves ch05_block out")
def test_an_error_mid_task_replaces_the_worker_and_a_closed_pool_refuses(lone_pool, monkeypatch):
    """Any exception once a task is handed over (here: from the first os.set_blocking of its
    pipe) costs that task and replaces the worker; a task asked of a closed pool is refused
    instead of waiting forever."""
    task = next(iter(engine._plan(SAMPLES / "reference", ASSIGNMENT, engine.DEFAULT_TIMEOUT)["tasks"].values()))
    lone_pool.wait_ready()
    real_set_blocking, calls = os.set_blocking, []

    def set_blocking(*args):
        calls.append(1)
        if len(calls) == 1:
            raise ValueError("filedescriptor out of range")  # as select() said past descriptor 1023
        return real_set_blocking(*args)
    monkeypatch.setattr(sandbox.os, "set_blocking", set_blocking)
    finished, failure = _in_thread(lambda: lone_pool.run(task))
    assert finished and isinstance(failure, sandbox.WorkerFailure) and "out of range" in str(failure), failure
    finished, reply = _in_thread(lambda: lone_pool.run(task))
    assert finished and isinstance(reply, tuple) and reply[0] == "ok", reply
    lone_pool.close()
    finished, refused = _in_thread(lambda: lone_pool.run(task))
    assert finished and isinstance(refused, sandbox.SandboxUnavailable) and "closed" in str(refused), refused


# --- a class with pathological submissions, through nbgrader's parallel path and Ray -------------

PATHOLOGICAL = ("wide", "deep", "many", "huge")


def _class_of(released, folder, pathological):  # noqa: F811 (released is the fixture's value)
    """A course copy whose class is the honest students (and the pathological ones)."""
    root = course_copy(released, folder, "course")
    for student in os.listdir(root / "submitted"):
        if student not in HONEST:
            shutil.rmtree(root / "submitted" / student)
    if not pathological:
        return root
    for name in PATHOLOGICAL:
        shutil.copytree(SAMPLES / "reference", root / "submitted" / name / ASSIGNMENT)
    submitted = {name: root / "submitted" / name / ASSIGNMENT for name in PATHOLOGICAL}
    for index in range(25_000):  # wide: 25,000 empty folders beside an honest submission
        (submitted["wide"] / "junk" / f"d{index:05d}").mkdir(parents=True)
    make_deep(submitted["deep"], DEEP)  # deep: a chain 2,000 folders deep beside it
    (submitted["many"] / "data").mkdir()  # many: more files than the safe copy takes
    for index in range(12_000):
        (submitted["many"] / "data" / f"f{index:05d}").touch()
    os.truncate(submitted["huge"] / f"{ASSIGNMENT}.ipynb", 1 << 40)  # huge: a sparse notebook of 1 TiB
    return root


def autograde(root, *args, env=None, nofile=1024):
    """nbgrader autograde under a descriptor limit of `nofile`; a run past HANG seconds is killed
    with every process it started, and fails the test."""
    def limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))
    process = subprocess.Popen([sys.executable, "-m", "nbgrader", "autograde", ASSIGNMENT, *args,
                                "--log-level=ERROR"], cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env=env, preexec_fn=limit, start_new_session=True)
    try:
        _, stderr = process.communicate(timeout=HANG)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        pytest.fail(f"the class run was still going after {HANG} s: hung")
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    return stderr


@pytest.fixture(scope="module")
def alone(released, tmp_path_factory):
    """The honest students' gradebook, graded without the pathological ones."""
    root = _class_of(released, tmp_path_factory.mktemp("alone"), pathological=False)
    autograde(root)
    return {key: value for key, value in gradebook(root)[0].items() if key[0] in HONEST}


def _check_class(root, stderr, alone):
    scores = gradebook(root)[0]
    assert {key: value for key, value in scores.items() if key[0] in HONEST} == alone, stderr[-3000:]
    summary = [line for line in stderr.splitlines() if line.startswith("autograde:")]
    # found: what nbgrader goes on to grade, after the screen skipped the huge one
    assert len(summary) == 1 and "6 submission(s) found" in summary[0] and "1 skipped" in summary[0], stderr[-3000:]
    reference = {cell: value for (student, cell), value in scores.items() if student == "ada"}

    def report(student):
        return json.loads((root / "autograded" / student / ASSIGNMENT / "hero_report.json").read_text("utf-8"))
    # wide: its junk costs nothing; deep: its chain is refused and named, the rest graded; many: its
    # data/ (sorted before the package) passes the copy's limit, and the package is still copied whole
    for student in ("wide", "deep", "many"):
        assert {cell: value for (who, cell), value in scores.items() if who == student} == reference, student
    assert any(f"nested more than {safefiles.MAX_WALK_DEPTH} folders deep" in p for p in report("deep")["problems"])
    # many: the limit is named, never a silent cut; huge: skipped, said why
    assert any("more than 10000 files to read" in p for p in report("many")["problems"]), report("many")["problems"]
    assert report("huge")["skipped"] and "larger than" in report("huge")["problems"][0]


@needs_bubblewrap
@pytest.mark.skipif(SAMPLES is None, reason="HERO_TEST_ASSIGNMENTS leaves ch05_block out")
def test_a_class_with_pathological_submissions_ends_with_every_honest_student_graded(released, alone, scratch):
    root = _class_of(released, scratch, pathological=True)
    _check_class(root, autograde(root), alone)


@needs_bubblewrap
@pytest.mark.skipif(SAMPLES is None, reason="HERO_TEST_ASSIGNMENTS leaves ch05_block out")
def test_on_ray_the_pathological_class_ends_the_same(released, alone, scratch, two_node_cluster):
    address, env = two_node_cluster
    root = _class_of(released, scratch, pathological=True)
    _check_class(root, autograde(root, f"--HeroAutogradeConverter.ray_address={address}", env=env), alone)


WRITE_REPORT = """
import json, os, sys
from autograder.nbgrader_glue import REPORT_NAME, write_report
write_report(sys.argv[1], {"skipped": True, "score": 0, "problems": ["the new submission"]})
print(json.load(open(os.path.join(sys.argv[1], REPORT_NAME)))["problems"][0])
"""


@needs_bubblewrap
def test_a_read_only_report_of_an_earlier_run_is_replaced_by_an_ordinary_grader():
    """nbgrader leaves an autograded folder's files read-only (0444): a resubmission that the screen
    skips must still get its report written by a grader that is not root (root writes through any
    mode), or the class run ended there for everyone (a red-team run saw it, every rerun)."""
    from test_hostile import TEST_USER, _as_user_prefix, _ensure_user

    work = Path(tempfile.mkdtemp(prefix="hero-report-user-"))
    try:
        os.chmod(work, 0o755)
        autograded = work / "autograded"
        autograded.mkdir()
        (autograded / "hero_report.json").write_text('{"problems": ["the earlier submission"]}', encoding="utf-8")
        os.chmod(autograded / "hero_report.json", 0o444)
        prefix = []
        if os.geteuid() == 0:
            _ensure_user(TEST_USER)
            for path in (work, autograded, autograded / "hero_report.json"):
                shutil.chown(path, TEST_USER, TEST_USER)
            prefix = _as_user_prefix(TEST_USER, work)
        done = subprocess.run([*prefix, sys.executable, "-c", WRITE_REPORT, str(autograded)],
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0 and done.stdout.strip() == "the new submission", done.stderr[-3000:]
    finally:
        shutil.rmtree(work, ignore_errors=True)


def test_the_worker_files_are_readable_by_no_other_user(pool):
    """The chapters' probes (the cases' inputs, the test doubles) wait for the sandbox in a folder
    that no other user of the machine may list or read, during a class run and after a crash."""
    pool.wait_ready()
    folders = [pool._dir, *(os.path.join(pool._dir, name) for name in os.listdir(pool._dir))]
    assert "worker.py" in os.listdir(pool._dir)
    assert all(os.stat(path).st_mode & 0o007 == 0 for path in folders), \
        {path: oct(os.stat(path).st_mode) for path in folders}


LOOK_AROUND = """
import glob, os, sys
seen = {"modules": sorted(name for name in sys.modules if name.endswith("_probes")),
        "files": sorted(path for folder in ("/opt", "/tmp", "/submission", os.getcwd())
                        for path in glob.glob(folder + "/**/*_probes.py", recursive=True))}
"""


@needs_bubblewrap
@pytest.mark.skipif(SAMPLES is None, reason="HERO_TEST_ASSIGNMENTS leaves ch05_block out")
def test_a_task_holds_its_own_chapter_s_probes_only_and_no_file_of_any(pool):
    """The chapters' probes hold test doubles (chapter 6's once held chapter 5's GELU body) and say how
    each case is built: no file of them is in the sandbox, an exercise task's process holds its own
    chapter's module only, and a notebook task's none (red team, issue 38: a ch05 task read ch06's file
    and raised it in its feedback, 4,000 characters a time)."""
    plan = engine._plan(SAMPLES / "reference", ASSIGNMENT, engine.DEFAULT_TIMEOUT)
    exercise = plan["tasks"]["gelu"]
    model = exercise["files"]["hero_transformer/model.py"]
    exercise["files"] = {**exercise["files"], "hero_transformer/model.py": model.replace(
        "def gelu(x):", "def gelu(x):\n    " + LOOK_AROUND.replace("\n", "\n    ") + "\n    raise RuntimeError(repr(seen))", 1)}
    reply = engine._safe_run(pool, exercise)
    raised = next(iter(reply["payload"]["body"]["outputs"]["cpu"].values()))["raised"]["message"]
    assert eval(raised) == {"modules": [f"{ASSIGNMENT}_probes"], "files": []}, raised
    notebook = plan["tasks"]["notebook"]
    variable = notebook["variables"][0]
    notebook["cells"] = [[0, LOOK_AROUND + f"\n{variable} = repr(seen)"]]
    reply = engine._safe_run(pool, notebook)
    value = reply["payload"]["body"]["values"][variable]["ok"]
    assert eval(engine.probes.decode(value)) == {"modules": [], "files": []}, value

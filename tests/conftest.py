import atexit
import contextlib
import functools
import os
import secrets
import shutil
import tempfile
from pathlib import Path

import pytest

from autograder import engine, registry, release, samples
from autograder.sandbox import WorkerPool, bubblewrap_works

# chapter 5 is the chapter these tests grade through; its catalogues, by kind
CHAPTER = registry.ASSIGNMENTS["ch05_block"]
FAULTS, CORRECT, FORBIDDEN = (CHAPTER.entries(kind) for kind in ("fault", "correct", "forbidden"))
MODEL = "hero_transformer/model.py"


# HERO_TEST_ASSIGNMENTS=ch01_tokens,ch04_attention narrows the per-chapter proofs to those
# chapters (a chapter author's loop: `pytest tests/test_catalogues.py tests/test_notebook.py`);
# unset, as in `make test` and CI, every chapter is proven
_ONLY = [name for name in os.environ.get("HERO_TEST_ASSIGNMENTS", "").split(",") if name]
TESTED = [a for a in registry.ASSIGNMENTS.values() if not _ONLY or a.id in _ONLY]


@functools.cache
def _samples_root():
    root = Path(tempfile.mkdtemp(prefix="hero-samples-"))
    os.chmod(root, 0o755)  # the ordinary-user tests read them too
    atexit.register(shutil.rmtree, root, True)
    return root


class SampleFolder(os.PathLike):
    """One tested assignment's sample submissions (`hero samples`; hostile ones left out:
    tests/hostile_batch.py builds those with its own targets), written on first use, once per test
    run: importing this file costs nothing, so one test file runs without every chapter's samples."""

    def __init__(self, assignment):
        self.assignment = assignment

    @functools.cached_property
    def path(self):
        return samples.write(_samples_root(), [self.assignment], with_hostile=False)[self.assignment.id]

    def __fspath__(self):
        return os.fspath(self.path)

    def __truediv__(self, name):
        return self.path / name

    def __getattr__(self, name):  # iterdir(), exists()...: the folder's, once written (nothing else
        if name.startswith("_") or not hasattr(Path, name):  # writes it: pytest probes module attributes)
            raise AttributeError(name)
        return getattr(self.path, name)

    def __str__(self):
        return str(self.path)

    def __repr__(self):
        return f"SampleFolder({self.assignment.id!r})"


SAMPLE_ROOTS = {a.id: SampleFolder(a) for a in TESTED}  # {assignment id: its samples folder}
SAMPLES = SAMPLE_ROOTS.get(CHAPTER.id)

# the isolation tests' proof that grading through pytest never imports this file
if os.environ.get("HERO_TEST_CONFTEST_MARKER"):
    Path(os.environ["HERO_TEST_CONFTEST_MARKER"]).write_text("imported", encoding="utf-8")

needs_bubblewrap = pytest.mark.skipif(
    not bubblewrap_works(), reason="bwrap is not available here: `make test` installs it (apt-get install bubblewrap)"
)


@pytest.fixture(scope="session")
def pool():
    """One worker pool for the whole session: torch is imported once per worker."""
    workers = WorkerPool()
    yield workers
    workers.close()


@pytest.fixture(scope="session")
def reports(pool):
    """{(assignment id, sample name): report}, every generated sample of every assignment graded once."""
    found = {}
    for assignment_id, folder in SAMPLE_ROOTS.items():
        names = samples.names(folder)
        graded = engine.grade_many([folder / name for name in names], assignment_id, pool=pool)
        found.update({(assignment_id, name): report for name, report in zip(names, graded)})
    return found


def apply_edits(folder, edits):
    """edits={relpath: [(old, new), ...]}: replace text in the folder's files; each old text must be there."""
    for relpath, replacements in edits.items():
        path = folder / relpath
        text = path.read_text(encoding="utf-8")
        for old, new in replacements:
            assert old in text, f"{old!r} not in {relpath}"
            text = text.replace(old, new)
        path.write_text(text, encoding="utf-8")


@pytest.fixture
def submission(tmp_path):
    """A copy of a bundled sample, optionally edited.

    edits={relpath: [(old, new), ...]} replaces text in a file;
    answers={answer_id: source} replaces the source of that answer's notebook cell."""
    def make(sample="reference", edits=None, answers=None, name="student"):
        folder = tmp_path / name
        shutil.copytree(SAMPLES / sample, folder)
        if answers:
            release.replace_answers(folder / "ch05_block.ipynb", answers)
        apply_edits(folder, edits or {})
        return folder
    return make


@pytest.fixture
def grade(pool):
    def run(folder, timeout=engine.DEFAULT_TIMEOUT):
        return engine.grade(Path(folder), "ch05_block", pool=pool, timeout=timeout)
    return run


def charge_nothing(files, assignment):
    """engine.reaches_by_exercise for a grader that does not read the source (reach.py)."""
    return {exercise.id: [] for exercise in assignment.exercises}


@pytest.fixture
def source_unread(monkeypatch):
    """The grader grades without reading the submission's source: a test of a layer beneath that check
    (the sandbox, the watch, a crash's cost) with a body that imports ctypes or os proves that layer alone."""
    monkeypatch.setattr(engine, "reaches_by_exercise", charge_nothing)


# the checks a forbidden shortcut may fail beside the forbidden call: a route through torch's internals
# often has no autograd formula (a custom operator, a replaced kernel, a fused op), and a body that builds
# its own float32 module cannot take a float64 input, and a fused attention call hands no scores to
# stable_softmax (chapter 4's mask_value case counts the -inf it is given); every other check must pass
BESIDE_A_SHORTCUT = {"matches the reference on case 'gradients' (cpu)", "gradients reach the input and every parameter",
                     "matches the reference on case 'far_offset' (cpu)", "matches the reference on case 'float64' (cpu)",
                     "matches the reference on case 'mask_value' (cpu)"}

# one line per catalogue, printed at the end of the run (see pytest_terminal_summary)
SUMMARY = {}


def pytest_terminal_summary(terminalreporter):
    if "kill matrix" in SUMMARY:
        terminalreporter.section("kill matrix: points per exercise of each faulty sample")
        terminalreporter.write_line(SUMMARY["kill matrix"])
    if "chapters" in SUMMARY:
        terminalreporter.section("chapters: items, points and catalogues")
        terminalreporter.write_line(SUMMARY["chapters"])
    if SUMMARY:
        terminalreporter.section("grader catalogues")
        for key in ("faulty", "correct", "forbidden", "mutants", "hostile", "bad input"):
            if key in SUMMARY:
                terminalreporter.write_line(SUMMARY[key])


def scores(report):
    return {item.id: item.score for item in report.items}


# set, with a value of the test's own, in the environment of every process of a Ray a test starts
# (Ray's processes inherit it), so that the test can find all of them and only them
RAY_PROCESSES = "HERO_TEST_RAY_PROCESSES"


@pytest.fixture(scope="session")
def two_node_cluster():
    """HOST:PORT of a Ray head and a second node joined to it, one CPU each, token-authenticated
    (hero_transformer/cluster.py's local_cluster), and the environment that joins it, whose
    RAY_PROCESSES names the cluster's processes: started once for the whole run by the first test
    that asks (the modules that grade or run grids on Ray share it), stopped and its folder removed
    at the end of the run, pass or fail."""
    from hero_transformer import cluster

    with contextlib.ExitStack() as stack:
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv(RAY_PROCESSES, secrets.token_hex(8))
            joined = stack.enter_context(cluster.local_cluster(nodes=2, cpus_per_node=1))
        yield joined

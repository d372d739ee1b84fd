"""The instructor's workflow through nbgrader, including three tamper attempts that beat plain nbgrader."""

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from nbgrader.api import Gradebook

from autograder import registry, release

from conftest import MODEL, SAMPLES, needs_bubblewrap

ASSIGNMENT = "ch05_block"
NOTEBOOK = f"{ASSIGNMENT}.ipynb"
pytestmark = pytest.mark.skipif(SAMPLES is None, reason="HERO_TEST_ASSIGNMENTS leaves ch05_block out")

ALLCLOSE_PATCH = ("import math, torch\ntorch.allclose = lambda *a, **k: True\n"
                  "torch.equal = lambda *a, **k: True\nmath.isclose = lambda *a, **k: True\n")
TRANSFORMER = ("ip = get_ipython()\nip.input_transformers_post.append(lambda lines: ['pass\\n'])\n"
               "normalised_variance = 0.5\n")


def gradebook_attack(root):
    """Answer-cell code that rewrites every grade in the course's gradebook (it works outside the sandbox)."""
    return (
        "import sqlite3\n"
        f"for path in [{str(root / 'gradebook.db')!r}, '../../../gradebook.db']:\n"
        "    try:\n"
        "        db = sqlite3.connect('file:' + path + '?mode=rw', uri=True)\n"
        "        db.execute('UPDATE grade SET extra_credit = 100')\n"
        "        db.commit()\n"
        "    except Exception as exc:\n"
        "        print('attack failed:', exc)\n"
        "near_constant_output = [0.0] * 3\n"
    )


def nbgrader(root, *args):
    done = subprocess.run([sys.executable, "-m", "nbgrader", *args, "--log-level=ERROR"], cwd=root,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def submit(root, student, sample, answers=None, model_prefix=""):
    folder = root / "submitted" / student / ASSIGNMENT
    shutil.copytree(SAMPLES / sample, folder)
    if model_prefix:
        path = folder / MODEL
        path.write_text(model_prefix + path.read_text(encoding="utf-8"), encoding="utf-8")
    if answers:
        release.replace_answers(folder / NOTEBOOK, answers)


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    root = tmp_path_factory.mktemp("course")
    shutil.copytree(registry.COURSE_DIR, root / registry.SOURCE_DIR)
    shutil.copy(registry.REPO_ROOT / "nbgrader_config.py", root)
    nbgrader(root, "generate_assignment", ASSIGNMENT, "--force")
    submit(root, "alice", "reference")
    submit(root, "bob", "post_ln")
    submit(root, "mallory_allclose", "post_ln", {"residual_output": ALLCLOSE_PATCH + "residual_output = [0.0, 0.0]\n"},
           model_prefix="import torch\ntorch.allclose = lambda *a, **k: True\n")
    submit(root, "mallory_transformer", "reference", {"normalised_variance": TRANSFORMER})
    submit(root, "mallory_gradebook", "reference", {"near_constant_output": gradebook_attack(root)})
    nbgrader(root, "autograde", ASSIGNMENT, "--force")
    return root


def cell_scores(root, student):
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gradebook:
        notebook = gradebook.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, student)
        return {grade.name: (grade.auto_score, grade.extra_credit) for grade in notebook.grades}


def test_release_holds_the_stubbed_package(course):
    release_dir = course / registry.RELEASE_DIR / ASSIGNMENT
    assert (release_dir / NOTEBOOK).exists()
    assert "raise NotImplementedError('block')" in (release_dir / MODEL).read_text(encoding="utf-8")


def test_autograde_writes_per_cell_points(course):
    points = registry.ASSIGNMENTS[ASSIGNMENT].points()
    assert {name: score for name, (score, _) in cell_scores(course, "alice").items()} == points
    bob = {name: score for name, (score, _) in cell_scores(course, "bob").items()}
    assert bob == {**points, "block": 0.0}


def test_patching_allclose_gains_nothing(course):
    scores = cell_scores(course, "mallory_allclose")
    assert scores["residual_output"][0] == 0 and scores["block"][0] == 0


def test_an_input_transformer_gains_nothing(course):
    scores = {name: score for name, (score, _) in cell_scores(course, "mallory_transformer").items()}
    assert scores["normalised_variance"] == 0
    honest = {name: score for name, (score, _) in cell_scores(course, "alice").items()}
    assert all(scores[name] <= honest[name] for name in honest)


@needs_bubblewrap
def test_opening_the_gradebook_changes_no_grade(course, tmp_path):
    scores = cell_scores(course, "mallory_gradebook")
    assert scores["near_constant_output"][0] == 0
    with sqlite3.connect(course / "gradebook.db") as db:
        assert db.execute("SELECT COUNT(*) FROM grade WHERE extra_credit IS NOT NULL AND extra_credit != 0"
                          ).fetchone()[0] == 0
    # control: the same code, run where it can reach the file, does rewrite every grade
    copy = tmp_path / "gradebook.db"
    shutil.copy(course / "gradebook.db", copy)
    namespace = {}
    exec(gradebook_attack(tmp_path), namespace)
    with sqlite3.connect(copy) as db:
        assert db.execute("SELECT COUNT(*) FROM grade WHERE extra_credit = 100").fetchone()[0] > 0


def test_feedback_and_export(course):
    nbgrader(course, "generate_feedback", ASSIGNMENT, "--force")
    nbgrader(course, "export")
    feedback = list((course / "feedback").rglob("*.html"))
    assert {p.parts[-3] for p in feedback} == {"alice", "bob", "mallory_allclose", "mallory_transformer",
                                               "mallory_gradebook"}
    for path in (course / "feedback").rglob("*"):
        if path.is_file() and path.suffix in (".html", ".json", ".py", ".ipynb"):
            text = path.read_text(encoding="utf-8")
            assert "hidden_check" not in text and "BEGIN HIDDEN TESTS" not in text, path
    # the student's own package reaches feedback untouched: nothing from the source overwrote it
    returned = course / "feedback" / "bob" / ASSIGNMENT / MODEL
    assert returned.read_text(encoding="utf-8") == (SAMPLES / "post_ln" / MODEL).read_text(encoding="utf-8")
    bob = (course / "feedback" / "bob" / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text(encoding="utf-8")
    assert "post-LN" in bob
    assert "alice" in Path(course / "grades.csv").read_text(encoding="utf-8")
    # the report a student gets back: their own folder's name, readable Chinese
    returned_report = (course / "feedback" / "bob" / ASSIGNMENT / "hero_report.json").read_text(encoding="utf-8")
    assert json.loads(returned_report)["submission"] == f"bob/{ASSIGNMENT}"
    assert str(course) not in returned_report and "\\u" not in returned_report and "可能的误解" in returned_report


def test_autograde_logs_no_noise_for_cells_as_released_and_warns_for_an_edited_one(tmp_path):
    """nbgrader logs "checksum has changed" for every grade cell whose hidden tests the release
    removed, and SQLAlchemy warns about its session: neither is printed any more, while a locked
    cell a student really edited still gets nbgrader's warning."""
    root = tmp_path / "course"
    shutil.copytree(registry.COURSE_DIR, root / registry.SOURCE_DIR)
    shutil.copy(registry.REPO_ROOT / "nbgrader_config.py", root)
    nbgrader(root, "generate_assignment", ASSIGNMENT, "--force")
    submit(root, "honest", "reference")
    submit(root, "editor", "reference")
    notebook = root / "submitted" / "editor" / ASSIGNMENT / NOTEBOOK
    data = json.loads(notebook.read_text(encoding="utf-8"))
    locked = next(c for c in data["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == "given_01")
    locked["source"] = "EPS = 0.1  # edited by the student\n"
    notebook.write_text(json.dumps(data), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "nbgrader", "autograde", ASSIGNMENT, "--force"], cwd=root,
                          capture_output=True, text=True)
    log = done.stdout + done.stderr
    assert done.returncode == 0, log[-3000:]
    assert "SAWarning" not in log
    changed = [line for line in log.splitlines() if "has changed" in line]
    assert changed and all("given_01" in line for line in changed), changed

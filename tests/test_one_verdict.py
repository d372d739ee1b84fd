"""One limit, one verdict: a submission's grade does not depend on the front end.

The notebook limit measures the notebook's content (autograder/engine.py, `notebook_size`), not
the bytes of whichever file a front end hands the grader: nbgrader re-indents a submission and
splits its sources in lines before the grader reads its copy, so a notebook just under the limit
as submitted is far over it as nbgrader writes it.  That notebook gets the same score through
`hero grade`, `nbgrader autograde`, `pytest --hero-submission` and Gradescope's runner; one over
the limit loses its answers, and is named, through both the grader and nbgrader's screen.

The limits on a notebook's shape (its cells, JSON objects and JSON values: `engine.parse_notebook`)
are checked before anything parses it, on every front end; nbgrader's screen refuses such a
notebook from its bytes and processes a stand-in for it, so it costs seconds, not the minutes and
gigabytes that 800,000 empty cells cost before (red team, issue 38, W7), and gets the verdict that
every other front end gives.
"""

import json
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ElementTree

import nbformat
import pytest
from nbgrader.api import Gradebook

from autograder import class_ray, engine, ledger, nbgrader_glue, registry, safefiles

from conftest import SAMPLES, needs_bubblewrap
from test_gradescope import _why_not, needs_root_and_bwrap, root  # noqa: F401 (a fixture: the unpacked runner, set up)

ASSIGNMENT = registry.ASSIGNMENTS["ch05_block"]
NOTEBOOK = ASSIGNMENT.notebook_name
FULL = sum(ASSIGNMENT.points().values())
pytestmark = [pytest.mark.skipif(SAMPLES is None, reason="HERO_TEST_ASSIGNMENTS leaves ch05_block out"),
              needs_bubblewrap]


def padded(notebook, content_bytes):
    """`notebook` (the reference's answers) with a raw cell of comment-like lines, so that its
    content measures `content_bytes`; written compact, as some editors and tools save it."""
    notebook = json.loads(json.dumps(notebook))
    notebook["cells"].append({"cell_type": "raw", "id": "padding", "metadata": {}, "source": ""})
    line = "# " + "n" * 27 + "\n"  # 30 characters: nbgrader's copy gives each a line of its own
    missing = content_bytes - engine.notebook_size(notebook)
    measured = len(json.dumps(line)) - 2  # as JSON: its newline is two characters
    notebook["cells"][-1]["source"] = line * (missing // measured) + "#" * (missing % measured)
    assert engine.notebook_size(notebook) == content_bytes
    return json.dumps(notebook, ensure_ascii=False, separators=(",", ":"))


@pytest.fixture(scope="module")
def borderline(tmp_path_factory):
    folder = tmp_path_factory.mktemp("borderline") / "submission"
    shutil.copytree(SAMPLES / "reference", folder)
    text = padded(json.loads((folder / NOTEBOOK).read_text(encoding="utf-8")), engine.MAX_NOTEBOOK_BYTES - 20_000)
    (folder / NOTEBOOK).write_text(text, encoding="utf-8")
    # as submitted it is under the limit; the copy nbgrader writes for the grader is far over it
    assert len(text.encode()) <= engine.MAX_NOTEBOOK_BYTES
    assert len(nbformat.writes(nbformat.reads(text, as_version=4)).encode()) > 1.2 * engine.MAX_NOTEBOOK_BYTES
    return folder


def hero_grade_report(folder):
    done = subprocess.run([sys.executable, "-m", "autograder.cli", "grade", str(folder), "--assignment", ASSIGNMENT.id,
                           "--format", "json"], capture_output=True, text=True, cwd=registry.REPO_ROOT)
    return json.loads(done.stdout)


def through_hero_grade(folder):
    return hero_grade_report(folder)["score"]


def through_nbgrader(folder, course):
    shutil.copytree(registry.COURSE_DIR, course / registry.SOURCE_DIR)
    shutil.copy(registry.REPO_ROOT / "nbgrader_config.py", course)
    shutil.copytree(folder, course / "submitted" / "ada" / ASSIGNMENT.id)
    for step in (("generate_assignment", "--force"), ("autograde",)):
        done = subprocess.run([sys.executable, "-m", "nbgrader", step[0], ASSIGNMENT.id, *step[1:],
                               "--log-level=ERROR"], cwd=course, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads((course / "autograded" / "ada" / ASSIGNMENT.id / nbgrader_glue.REPORT_NAME).read_text("utf-8"))
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as book:
        return book.find_submission(ASSIGNMENT.id, "ada").score, report["problems"]


def through_pytest(folder, tmp_path):
    junit = tmp_path / "junit.xml"
    subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--hero-submission", str(folder),
                    "--hero-assignment", ASSIGNMENT.id, f"--junitxml={junit}"], capture_output=True, text=True,
                   cwd=tmp_path)
    points = ASSIGNMENT.points()
    return sum(points[case.get("name")] for case in ElementTree.parse(junit).getroot().iter("testcase")
               if case.find("failure") is None and case.find("error") is None and case.find("skipped") is None)


@needs_root_and_bwrap
def test_a_borderline_notebook_gets_one_score_through_every_front_end(borderline, root, tmp_path):  # noqa: F811
    upload = tmp_path / "upload"
    shutil.copytree(borderline, upload / ASSIGNMENT.id)
    results, output, _ = root.run_autograder(upload)
    assert results is not None, output[-3000:]
    nbgrader_score, problems = through_nbgrader(borderline, tmp_path / "course")
    scores = {"hero grade": through_hero_grade(borderline), "nbgrader autograde": nbgrader_score,
              "pytest --hero-submission": through_pytest(borderline, tmp_path), "gradescope": results["score"]}
    assert scores == dict.fromkeys(scores, FULL), (scores, problems)


def test_a_notebook_over_the_limit_loses_its_answers_alike_through_the_grader_and_nbgrader(tmp_path):
    """Measured the same way whatever the file's layout (compact, or as nbgrader writes it); and
    nbgrader's screen leaves the verdict to the grader, so both front ends give the same score."""
    notebook = json.loads((SAMPLES / "reference" / NOTEBOOK).read_text(encoding="utf-8"))
    over = padded(notebook, engine.MAX_NOTEBOOK_BYTES + 1)
    for layout, text in [("compact", over), ("nbgrader's", nbformat.writes(nbformat.reads(over, as_version=4)))]:
        folder = tmp_path / layout
        folder.mkdir()
        (folder / NOTEBOOK).write_text(text, encoding="utf-8")
        problems, refused = [], []
        with safefiles.Folder(folder) as opened:
            assert engine.read_notebook_cells(opened, NOTEBOOK, problems, refused) == (None, {})
        assert refused and f"more than {engine.MAX_NOTEBOOK_BYTES}" in refused[0], (layout, problems)
    submission = tmp_path / "submission"
    shutil.copytree(SAMPLES / "reference", submission)
    (submission / NOTEBOOK).write_text(over, encoding="utf-8")
    nbgrader_score, problems = through_nbgrader(submission, tmp_path / "course")
    assert any(f"more than {engine.MAX_NOTEBOOK_BYTES}" in problem for problem in problems), problems
    answers = sum(ASSIGNMENT.points()[answer.id] for answer in ASSIGNMENT.answers)
    assert through_hero_grade(submission) == nbgrader_score == FULL - answers


def test_the_ray_path_ships_the_copy_nbgrader_wrote_of_a_borderline_notebook(borderline, tmp_path):
    """On Ray (`--address`) the autograded folder's files cross to a node, which grades them with
    the same engine: the copy nbgrader writes of a notebook under the limit is shipped whole."""
    folder = tmp_path / "autograded"
    shutil.copytree(borderline, folder)
    as_written = nbformat.writes(nbformat.reads((folder / NOTEBOOK).read_text(encoding="utf-8"), as_version=4))
    (folder / NOTEBOOK).write_text(as_written, encoding="utf-8")
    assert class_ray.read_folder(folder)[NOTEBOOK] == as_written.encode()


def test_a_kept_result_is_keyed_by_the_bytes_of_a_notebook_larger_than_20_mb(tmp_path):
    """A notebook the grader reads (its file up to 4x the content limit) is part of its result's
    key by its bytes: two such notebooks never share a kept result (before: both were keyed by
    the same refusal, "larger than 20000000 bytes", and a resubmission reused the first's grade)."""
    digests = set()
    for variant in "ab":
        folder = tmp_path / variant
        folder.mkdir()
        (folder / NOTEBOOK).write_text(json.dumps({"cells": [], "pad": " " * 21_000_000 + variant}), encoding="utf-8")
        digests.add(ledger.submission_digest(folder))
    assert len(digests) == 2


# --- the notebook's shape: its cells, JSON objects and values (red team, issue 38, W7) -----------

SHAPE_LIMITS = {"cells": (engine.MAX_NOTEBOOK_CELLS, "cells"), "objects": (engine.MAX_NOTEBOOK_OBJECTS, "JSON objects"),
                "values": (engine.MAX_NOTEBOOK_VALUES, "JSON values")}


def objects_in(value):
    """The JSON objects in a parsed value, counted on the parsed value (what engine.notebook_shape
    counts on the file's bytes)."""
    if isinstance(value, dict):
        return 1 + sum(objects_in(item) for item in value.values())
    return sum(objects_in(item) for item in value) if isinstance(value, list) else 0


def shaped(notebook, limit, extra):
    """`notebook` padded to `extra` past `limit` (0: exactly at it) in the ways the red team padded one:
    empty cells, empty objects in its metadata, a raw cell of empty lines."""
    notebook = json.loads(json.dumps(notebook))
    cells = notebook["cells"]
    if limit == "cells":
        cells += [{"cell_type": "raw", "id": f"pad{i}", "metadata": {}, "source": ""}
                  for i in range(engine.MAX_NOTEBOOK_CELLS - len(cells) + extra)]
    elif limit == "objects":
        notebook["metadata"]["padding"] = [{}] * (engine.MAX_NOTEBOOK_OBJECTS - objects_in(notebook) + extra)
    else:
        cells.append({"cell_type": "raw", "id": "lines", "metadata": {}, "source": ""})
        _, values = engine.notebook_shape(json.dumps(notebook).encode())
        cells[-1]["source"] = "\n" * (engine.MAX_NOTEBOOK_VALUES - values + extra)  # each line is one value
    return notebook


def compact(notebook):
    """`notebook` as some editors save it: each source one string, no white space."""
    cells = [{**cell, "source": "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]}
             for cell in notebook["cells"]]
    return json.dumps({**notebook, "cells": cells}, ensure_ascii=False, separators=(",", ":"))


def test_each_limit_on_a_notebook_s_shape_refuses_it_by_name_whatever_its_layout(tmp_path):
    """At each limit the notebook is read; one past it is refused, named, before it is parsed: written
    compact or as nbgrader writes it (indented, its sources split in lines), it measures the same."""
    release = json.loads((registry.REPO_ROOT / registry.RELEASE_DIR / ASSIGNMENT.id / NOTEBOOK).read_text("utf-8"))
    assert engine.notebook_shape(compact(release).encode())[0] == objects_in(release)
    for limit, (maximum, what) in SHAPE_LIMITS.items():
        for extra in (0, 1):
            text = compact(shaped(release, limit, extra))
            as_written = nbformat.writes(nbformat.reads(text, as_version=4))
            assert engine.notebook_shape(text.encode()) == engine.notebook_shape(as_written.encode()), limit
            for layout, written in [("compact", text), ("nbgrader's", as_written)]:
                (tmp_path / NOTEBOOK).write_text(written, encoding="utf-8")
                problems, refused = [], []
                with safefiles.Folder(tmp_path) as opened:
                    cells, _ = engine.read_notebook_cells(opened, NOTEBOOK, problems, refused)
                if extra:
                    assert cells is None and len(refused) == 1, (limit, layout, problems)
                    assert f"{what}" in refused[0] and refused[0].endswith(f"more than {maximum}"), refused
                else:
                    assert cells and not problems, (limit, layout, problems)


def test_nbgrader_s_screen_refuses_it_from_its_bytes_before_nbformat_reads_it(tmp_path, monkeypatch):
    import nbformat as nbformat_module

    def never(*args, **kwargs):
        raise AssertionError("nbformat read a notebook the grader refuses")

    release = json.loads((registry.REPO_ROOT / registry.RELEASE_DIR / ASSIGNMENT.id / NOTEBOOK).read_text("utf-8"))
    (tmp_path / NOTEBOOK).write_text(json.dumps(shaped(release, "cells", 1)), encoding="utf-8")
    monkeypatch.setattr(nbformat_module, "reads", never)
    reason, stand_ins = nbgrader_glue.screen(str(tmp_path), [str(tmp_path / NOTEBOOK)])
    assert reason is None and stand_ins == {str(tmp_path / NOTEBOOK): f"{NOTEBOOK} holds "
                                            f"{engine.MAX_NOTEBOOK_CELLS + 1} cells, more than {engine.MAX_NOTEBOOK_CELLS}"}


def test_a_notebook_over_the_cell_limit_gets_one_verdict_through_every_front_end(tmp_path, request):
    """The reference's answers in a notebook of one cell too many: refused and named, its answers
    lost and its exercises graded, alike through `hero grade`, `nbgrader autograde` (which
    processes a stand-in: the note and the grade cells, never the student's cells),
    `pytest --hero-submission` and Gradescope's runner (where root and bubblewrap allow)."""
    folder = tmp_path / "submission"
    shutil.copytree(SAMPLES / "reference", folder)
    notebook = json.loads((folder / NOTEBOOK).read_text(encoding="utf-8"))
    (folder / NOTEBOOK).write_text(json.dumps(shaped(notebook, "cells", 1)), encoding="utf-8")
    named = f"{NOTEBOOK} holds {engine.MAX_NOTEBOOK_CELLS + 1} cells, more than {engine.MAX_NOTEBOOK_CELLS}"
    answers = sum(ASSIGNMENT.points()[answer.id] for answer in ASSIGNMENT.answers)

    report = hero_grade_report(folder)
    assert report["score"] == FULL - answers and named in report["problems"], report["problems"]
    scores = {"hero grade": report["score"]}

    scores["nbgrader autograde"], problems = through_nbgrader(folder, tmp_path / "course")
    assert named in problems, problems
    autograded = json.loads((tmp_path / "course" / "autograded" / "ada" / ASSIGNMENT.id / NOTEBOOK).read_text("utf-8"))
    graded = [cell for cell in autograded["cells"] if cell["metadata"].get("nbgrader", {}).get("grade")]
    assert len(autograded["cells"]) == 1 + len(ASSIGNMENT.points()) == 1 + len(graded), len(autograded["cells"])
    assert named in "".join(autograded["cells"][0]["source"])
    assert all("HIDDEN TESTS" not in "".join(cell["source"]) and cell["outputs"] for cell in graded)

    scores["pytest --hero-submission"] = through_pytest(folder, tmp_path)
    assert named in (tmp_path / "junit.xml").read_text(encoding="utf-8")

    if _why_not() is None:
        upload = tmp_path / "upload"
        shutil.copytree(folder, upload / ASSIGNMENT.id)
        results, output, _ = request.getfixturevalue("root").run_autograder(upload)
        assert results is not None, output[-3000:]
        assert any(named in test.get("output", "") for test in results["tests"]), output[-3000:]
        scores["gradescope"] = results["score"]
    assert scores == dict.fromkeys(scores, FULL - answers), scores

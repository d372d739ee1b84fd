"""The assignment comes from the grader, never from the submission.

The red team's case: chapter 5's release with every stub unfilled, plus an answered
`ch01_tokens.ipynb` dropped in, got 17/17 from Gradescope (graded as chapter 1, whose code the
later release already ships).  Every front end now grades such a folder as the assignment it
was told, 0 for every chapter-5 item and no chapter-1 item reported, or refuses it."""

import json
import os
import shutil
import subprocess
import sys
from xml.etree import ElementTree

import pytest

from autograder import registry, release

from conftest import SAMPLES

CH05 = registry.ASSIGNMENTS["ch05_block"]
CH01 = registry.ASSIGNMENTS["ch01_tokens"]
CH05_ITEMS = [item.id for item in CH05.exercises + CH05.answers]
CH01_ITEMS = {item.id for item in CH01.exercises + CH01.answers}


def _answered(assignment):
    name = assignment.notebook_name
    return release.answered_notebook(registry.REPO_ROOT / registry.RELEASE_DIR / assignment.id / name,
                                     registry.REPO_ROOT / registry.SOLUTION_DIR / assignment.id / name)


def hero(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "autograder.cli", *args], capture_output=True, text=True, cwd=cwd)


def pytest_run(cwd, *args):
    return subprocess.run([sys.executable, "-m", "pytest", "-v", *args], capture_output=True, text=True, cwd=cwd)


@pytest.fixture
def mixed(tmp_path):
    """The chapter-5 release as a student receives it, plus chapter 1's notebook with every answer right."""
    folder = tmp_path / "ch05_block"
    shutil.copytree(registry.REPO_ROOT / registry.RELEASE_DIR / CH05.id, folder,
                    ignore=shutil.ignore_patterns("__pycache__"))
    (folder / CH01.notebook_name).write_text(_answered(CH01), encoding="utf-8")
    return folder


def _assert_graded_as_ch05_with_nothing_earned(report):
    assert report["assignment"] == CH05.id
    assert [item["id"] for item in report["items"]] == [item for item in CH05.points()]
    assert not CH01_ITEMS & {item["id"] for item in report["items"]}
    assert report["score"] == 0 and all(item["score"] == 0 for item in report["items"])
    assert any("ch01_tokens.ipynb is the notebook of another assignment (ch01_tokens)" in problem
               and "ignored" in problem for problem in report["problems"]), report["problems"]


# --- the registry ------------------------------------------------------------------------


def test_a_named_assignment_is_what_the_folder_is_graded_as(mixed):
    assert registry.find_assignment(mixed, "ch05_block") is CH05
    assert registry.find_assignment(mixed, "ch01_tokens") is CH01  # the grader's word, not the folder's
    problems = registry.identity_problems(mixed, CH05)
    assert problems == ["ch01_tokens.ipynb is the notebook of another assignment (ch01_tokens); this submission is "
                        "graded as ch05_block and that notebook was ignored"]
    with pytest.raises(registry.UnknownAssignment, match="unknown assignment 'ch99_nothing'"):
        registry.find_assignment(mixed, "ch99_nothing")


def test_unnamed_a_folder_that_fits_several_assignments_is_refused(mixed, tmp_path):
    with pytest.raises(registry.AmbiguousAssignment) as refused:
        registry.find_assignment(mixed)
    message = str(refused.value)
    assert "ch01_tokens (it holds ch01_tokens.ipynb)" in message
    assert "ch05_block (it holds ch05_block.ipynb and it is named ch05_block)" in message
    assert "pass --assignment" in message
    # a folder named like one chapter holding another's notebook
    named = tmp_path / "ch01_tokens"
    shutil.copytree(SAMPLES / "reference", named)
    with pytest.raises(registry.AmbiguousAssignment,
                       match="ch01_tokens .it is named ch01_tokens.*ch05_block .it holds"):
        registry.find_assignment(named)
    # exactly one fits: chosen; none fits: the old message
    assert registry.find_assignment(SAMPLES / "reference") is CH05
    empty = tmp_path / "nothing"
    empty.mkdir()
    with pytest.raises(registry.UnknownAssignment, match="cannot tell which assignment .* pass --assignment"):
        registry.find_assignment(empty)


def test_only_names_are_looked_at(tmp_path):
    """A notebook that is a link or a FIFO still tells the folder's name only: nothing is opened."""
    folder = tmp_path / "submission"
    folder.mkdir()
    os.mkfifo(folder / CH05.notebook_name)
    (folder / CH01.notebook_name).symlink_to("/nonexistent")
    assert [a.id for a, _ in registry.fitting_assignments(folder)] == ["ch01_tokens", "ch05_block"]


# --- hero grade ----------------------------------------------------------------------------


def test_hero_grade_without_assignment_refuses_the_mixed_folder(mixed):
    done = hero("grade", str(mixed), "--format", "json")
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stdout == ""  # no report at all, so no chapter-1 item either
    assert "fits more than one assignment: ch01_tokens" in done.stderr and "ch05_block" in done.stderr
    assert "pass --assignment" in done.stderr
    assert "Traceback" not in done.stderr


def test_hero_grade_with_assignment_grades_it_as_named_and_ignores_the_other_notebook(mixed):
    done = hero("grade", str(mixed), "--assignment", "ch05_block", "--format", "json")
    assert done.returncode == 0, done.stderr[-2000:]
    _assert_graded_as_ch05_with_nothing_earned(json.loads(done.stdout))
    table = hero("grade", str(mixed), "--assignment", "ch05_block", "--lang", "en")
    assert "total: 0 / 21" in table.stdout
    assert "problem: ch01_tokens.ipynb is the notebook of another assignment" in table.stdout


def test_hero_grade_says_which_assignment_it_chose_when_one_fits():
    done = hero("grade", str(SAMPLES / "reference"), str(SAMPLES / "post_ln"), "--format", "json")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "grading 2 submissions as ch05_block, the only assignment each folder fits" in done.stderr
    assert [report["score"] for report in json.loads(done.stdout)] == [21, 18]


def test_gradescope_requires_the_assignment_and_then_grades_only_it(mixed, tmp_path):
    results = tmp_path / "results.json"
    refused = hero("grade", str(mixed), "--gradescope", str(results))
    assert refused.returncode == 2 and not results.exists()
    assert "--gradescope writes a report for a machine: name the assignment it grades with --assignment" in \
        refused.stderr
    done = hero("grade", str(mixed), "--assignment", "ch05_block", "--gradescope", str(results))
    assert done.returncode == 0, done.stderr[-2000:]
    graded = json.loads(results.read_text(encoding="utf-8"))
    assert graded["score"] == 0 and graded["max_score"] == 21
    names = [test["name"].split(":")[0] for test in graded["tests"]]
    assert names == list(CH05.points()) and all(test["score"] == 0 for test in graded["tests"])


@pytest.mark.parametrize("flag", [["--junit", "{tmp}/junit.xml"], ["--github-summary", "{tmp}/summary.md"],
                                  ["--github-summary"]])
def test_every_machine_report_requires_the_assignment(tmp_path, flag):
    done = hero("grade", str(SAMPLES / "reference"), *[word.format(tmp=tmp_path) for word in flag])
    assert done.returncode == 2 and "--assignment ID" in done.stderr
    assert not list(tmp_path.iterdir())


def test_an_honest_reference_keeps_full_marks_everywhere(tmp_path):
    results = tmp_path / "results.json"
    done = hero("grade", str(SAMPLES / "reference"), "--assignment", "ch05_block", "--gradescope", str(results))
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(results.read_text(encoding="utf-8"))["score"] == 21
    # the reference with chapter 1's notebook beside it: graded as chapter 5, nothing lost either
    beside = tmp_path / "reference_and_ch01"
    shutil.copytree(SAMPLES / "reference", beside)
    (beside / CH01.notebook_name).write_text(_answered(CH01), encoding="utf-8")
    graded = json.loads(hero("grade", str(beside), "--assignment", "ch05_block", "--format", "json").stdout)
    assert graded["score"] == graded["max_score"] == 21
    run = pytest_run(tmp_path, "--hero-submission", str(SAMPLES / "reference"), "--hero-assignment", "ch05_block")
    assert run.returncode == 0 and f"{len(CH05_ITEMS)} passed" in run.stdout, run.stdout[-3000:]


# --- pytest --hero-submission -------------------------------------------------------------------


def test_pytest_requires_the_assignment(mixed, tmp_path):
    done = pytest_run(tmp_path, "--hero-submission", str(mixed))
    assert done.returncode == 4, done.stdout[-2000:] + done.stderr[-2000:]
    assert "name the assignment with --hero-assignment" in done.stderr
    unknown = pytest_run(tmp_path, "--hero-submission", str(mixed), "--hero-assignment", "ch99_nothing")
    assert unknown.returncode == 4 and "unknown assignment 'ch99_nothing'" in unknown.stderr


def test_pytest_grades_the_mixed_folder_as_named(mixed, tmp_path):
    junit = tmp_path / "junit.xml"
    done = pytest_run(tmp_path, "--hero-submission", str(mixed), "--hero-assignment", "ch05_block",
                      f"--junitxml={junit}")
    assert done.returncode == 1, done.stdout[-3000:]
    assert f"{len(CH05_ITEMS)} failed" in done.stdout
    cases = {case.get("name"): {p.get("name"): p.get("value") for p in case.iter("property")}
             for case in ElementTree.parse(junit).getroot().iter("testcase")}
    assert sorted(cases) == sorted(CH05_ITEMS)
    assert all(float(properties["points"]) == 0 for properties in cases.values())
    assert not any(f"::{item} " in done.stdout for item in CH01_ITEMS)
    assert "ch01_tokens.ipynb is the notebook of another assignment" in done.stdout


# --- nbgrader ------------------------------------------------------------------------------


def test_nbgrader_glue_grades_the_assignment_on_its_command_line(mixed, tmp_path, monkeypatch):
    """HeroAutograde grades resources['nbgrader']['assignment'] (nbgrader's command line, which also
    names the folder submitted/<student>/<assignment>); the folder's notebooks do not change it.
    (nbgrader itself skips a notebook that is not in the gradebook: 'Skipping unknown notebook'.)"""
    import nbformat

    from autograder import engine, nbgrader_glue

    folder = tmp_path / "course" / "autograded" / "alice" / "ch05_block"
    shutil.copytree(mixed, folder)
    seen = []
    real = engine.grade

    def grade(path, assignment_id, **kwargs):
        seen.append(assignment_id)
        return real(path, assignment_id, **kwargs)

    monkeypatch.setattr(engine, "grade", grade)
    notebook = nbformat.read(str(folder / CH05.notebook_name), as_version=4)
    resources = {"metadata": {"path": str(folder)}, "nbgrader": {"assignment": "ch05_block", "notebook": "ch05_block"}}
    try:
        nbgrader_glue.HeroAutograde().preprocess(notebook, resources)
    finally:
        for pool in nbgrader_glue._pools.values():
            pool.close()
        nbgrader_glue._pools.clear()
    assert seen == ["ch05_block"]
    report = json.loads((folder / nbgrader_glue.REPORT_NAME).read_text(encoding="utf-8"))
    _assert_graded_as_ch05_with_nothing_earned(report)


def test_the_documented_commands_name_the_assignment_where_they_must():
    """Every documented unattended command (Gradescope, CI reports, pytest) names its assignment."""
    import re

    docs = [registry.REPO_ROOT / "README.md", *sorted((registry.REPO_ROOT / "docs").glob("*.md")),
            registry.REPO_ROOT / "autograder" / "ci" / "grade-pull-request.yml"]
    commands = []
    for path in docs:
        text = path.read_text(encoding="utf-8").replace("\\\n", " ")
        commands += [line for line in text.splitlines() if re.search(r"(^|\s)(\S*/)?hero grade |-m pytest ", line)
                     and not line.lstrip().startswith(("#", "|", "-", "*"))]
        commands += re.findall(r"`([^`]*(?:hero grade |-m pytest )[^`]*)`", text)
    assert len(commands) > 10
    for command in commands:
        if "--hero-submission" in command:
            assert "--hero-assignment" in command, command
        if "hero grade" in command and re.search(r"--(gradescope|junit|github-summary)\b", command):
            assert "--assignment" in command, command

"""The pytest front end: one item per exercise and answer, verdicts from the isolated grader."""

import subprocess
import sys
import xml.etree.ElementTree as ElementTree

from autograder import registry

from conftest import SAMPLES

ASSIGNMENT = registry.ASSIGNMENTS["ch05_block"]
ITEMS = [e.id for e in ASSIGNMENT.exercises] + [a.id for a in ASSIGNMENT.answers]


def pytest_run(tmp_path, *args):
    # from an empty folder: only the plugin's items, not this project's own tests; the assignment
    # is the grader's to name (tests/test_assignment_identity.py)
    if any(arg == "--hero-submission" for arg in args):
        args = (*args, "--hero-assignment", "ch05_block")
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-v", *args],
                          capture_output=True, text=True, cwd=tmp_path)


def test_stubs_fail_every_item_with_the_feedback_as_message(tmp_path):
    junit = tmp_path / "junit.xml"
    done = pytest_run(tmp_path, "--hero-submission", str(registry.REPO_ROOT / "student" / "ch05_block"),
                      "--hero-lang", "en", f"--junitxml={junit}")
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    for item in ITEMS:
        assert f"ch05_block::{item} FAILED" in done.stdout
    assert f"{len(ITEMS)} failed" in done.stdout
    assert "not implemented yet: still NotImplementedError('layer_norm')" in done.stdout
    cases = ElementTree.parse(junit).getroot().iter("testcase")
    named = {case.get("name"): case for case in cases}
    assert set(named) == set(ITEMS)
    assert all(case.find("failure") is not None for case in named.values())


def test_the_reference_passes_every_item(tmp_path):
    done = pytest_run(tmp_path, "--hero-submission", str(SAMPLES / "reference"))
    assert done.returncode == 0, done.stdout[-3000:]
    assert f"{len(ITEMS)} passed" in done.stdout
    assert "ch05_block::block PASSED" in done.stdout


def test_a_fault_fails_exactly_its_exercise(tmp_path):
    done = pytest_run(tmp_path, "--hero-submission", str(SAMPLES / "post_ln"), "--hero-lang", "en")
    assert done.returncode == 1
    assert "ch05_block::block FAILED" in done.stdout and "ch05_block::gelu PASSED" in done.stdout
    assert "post-LN" in done.stdout and f"1 failed, {len(ITEMS) - 1} passed" in done.stdout


def test_k_selects_items_by_name(tmp_path):
    done = pytest_run(tmp_path, "--hero-submission", str(SAMPLES / "post_ln"), "-k", "gelu or feedforward")
    assert done.returncode == 0 and "2 passed" in done.stdout and "deselected" in done.stdout


def test_without_the_option_the_plugin_collects_nothing_of_its_own(tmp_path):
    (tmp_path / "test_plain.py").write_text("def test_one():\n    assert True\n", encoding="utf-8")
    done = pytest_run(tmp_path)
    assert done.returncode == 0 and "1 passed" in done.stdout

"""`hero grade`: table, JSON, exit codes."""

import json
import subprocess
import sys

from conftest import SAMPLES


def hero(*args):
    return subprocess.run([sys.executable, "-m", "autograder.cli", *args], capture_output=True, text=True)


def test_stubs_table_shows_every_exercise_at_zero_with_not_implemented():
    done = hero("grade", str(SAMPLES / "stubs"))
    assert done.returncode == 0, done.stderr
    lines = {line.split()[0]: line for line in done.stdout.splitlines() if line.strip()}
    for exercise in ("layer_norm", "gelu", "feedforward", "block", "parameter_count"):
        assert " 0 " in lines[exercise] and "not_implemented" in lines[exercise]
        assert f"NotImplementedError('{exercise}" in lines[exercise]
    assert "total: 0 / 21" in done.stdout


def test_reference_json_has_full_marks_and_names_the_devices():
    done = hero("grade", str(SAMPLES / "reference"), "--format", "json", "--lang", "en")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["score"] == report["max_score"] == 21
    assert report["devices"][0] == "cpu"
    assert report["isolation"] in ("bubblewrap", "process")
    for item in report["items"]:
        assert {"id", "score", "max_score", "status", "feedback_zh", "feedback_en"} <= set(item)
        assert item["score"] == item["max_score"]


def test_several_submissions_grade_in_one_run_as_a_json_list():
    done = hero("grade", str(SAMPLES / "reference"), str(SAMPLES / "post_ln"), "--format", "json")
    reports = json.loads(done.stdout)
    assert [r["score"] for r in reports] == [21, 18]


def test_fail_under_turns_a_low_score_into_exit_1():
    assert hero("grade", str(SAMPLES / "post_ln"), "--fail-under", "90").returncode == 1
    assert hero("grade", str(SAMPLES / "post_ln"), "--fail-under", "80").returncode == 0


def test_english_feedback_and_details():
    done = hero("grade", str(SAMPLES / "eps_missing"), "--lang", "en", "--details")
    assert "likely misconception: eps was removed" in done.stdout


def test_grader_failure_is_a_nonzero_exit():
    assert hero("grade", "/nonexistent/folder").returncode == 2
    done = subprocess.run([sys.executable, "-m", "autograder.cli", "grade", str(SAMPLES / "reference")],
                          capture_output=True, text=True, env={"HERO_SANDBOX": "nonsense", "PATH": "/usr/bin:/bin"})
    assert done.returncode == 2
    assert "HERO_SANDBOX" in done.stderr

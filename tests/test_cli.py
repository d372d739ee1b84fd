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


def test_four_grading_runs_at_once_all_succeed():
    """Parallel CI jobs on one machine: each run owns its cgroups and removes only groups whose
    owner is gone, so no run deletes another's group between its creation and its first worker."""
    runs = [subprocess.Popen([sys.executable, "-m", "autograder.cli", "grade", str(SAMPLES / "reference"),
                              "--format", "json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(4)]
    for run in runs:
        out, err = run.communicate(timeout=600)
        assert run.returncode == 0, err[-2000:]
        report = json.loads(out)
        assert report["score"] == report["max_score"], err[-2000:]


def test_the_table_keeps_notebook_order_and_whole_feedback():
    done = hero("grade", str(SAMPLES / "stubs"), "--lang", "en")
    items = [line.split()[0] for line in done.stdout.splitlines()
             if line.split() and line.split()[0] in {"normalised_variance", "layer_norm", "residual_output", "gelu"}]
    assert items == ["normalised_variance", "layer_norm", "residual_output", "gelu"]
    assert "…" not in done.stdout
    assert "(counting from 1)" in done.stdout


def test_github_summary_without_a_file_prints_it_and_says_so(tmp_path):
    import os

    env = {k: v for k, v in os.environ.items() if k != "GITHUB_STEP_SUMMARY"}
    done = subprocess.run([sys.executable, "-m", "autograder.cli", "grade", str(SAMPLES / "post_ln"),
                           "--assignment", "ch05_block", "--github-summary", "--lang", "zh"], capture_output=True,
                          text=True, env=env)
    assert "$GITHUB_STEP_SUMMARY is not set" in done.stderr
    assert "### ch05_block: 18 / 21" in done.stdout
    assert "个评分项中有 1 个失分" in done.stdout  # the summary speaks the chosen language, all of it
    assert "检查过的设备" in done.stdout and "| 评分项 | 得分 |" in done.stdout and "Isolation" not in done.stdout
    assert "::error file=" in done.stdout and "可能的误解" in done.stdout


def test_hero_start_makes_a_working_copy_and_never_overwrites_it(tmp_path):
    target = tmp_path / "mine"
    first = subprocess.run([sys.executable, "-m", "autograder.cli", "start", "ch05_block", str(target)],
                           capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    model = target / "hero_transformer" / "model.py"
    assert "raise NotImplementedError('gelu')" in model.read_text(encoding="utf-8")
    model.write_text("# my work\n", encoding="utf-8")
    again = subprocess.run([sys.executable, "-m", "autograder.cli", "start", "ch05_block", str(target)],
                           capture_output=True, text=True)
    assert again.returncode == 1 and "already exists" in again.stderr
    assert model.read_text(encoding="utf-8") == "# my work\n"


def test_hero_grade_shows_a_progress_bar_with_eta_on_a_terminal():
    """On a terminal, stderr carries a bar with rate and ETA while grading runs, then a summary."""
    import fcntl
    import os
    import pty
    import re
    import struct
    import termios

    controller, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 120, 0, 0))
    run = subprocess.Popen([sys.executable, "-m", "autograder.cli", "grade", str(SAMPLES / "reference"),
                            str(SAMPLES / "stubs")], stdout=subprocess.DEVNULL, stderr=terminal)
    os.close(terminal)
    seen = b""
    while True:
        try:
            chunk = os.read(controller, 4096)
        except OSError:  # the other end closed
            break
        if not chunk:
            break
        seen += chunk
    run.wait(timeout=300)
    os.close(controller)
    text = seen.decode("utf-8", "replace")
    assert re.search(r"grading 2 submission\(s\):.*\|.*\d+/\d+ \[\d\d:\d\d<\d\d:\d\d", text), text[-500:]
    assert "hero grade: 2 submission(s) graded in" in text


def test_mutants_command_reports_a_table_and_a_summary_line(tmp_path):
    out = tmp_path / "mutants.md"
    done = hero("mutants", "ch05_block", "--exercise", "gelu", "--out", str(out))
    assert done.returncode == 0, done.stdout + done.stderr  # every mutant of gelu is killed or listed
    assert "| ch05_block |" in done.stdout and "mutants of 1 exercises in" in done.stdout.splitlines()[-1]
    report = out.read_text(encoding="utf-8")
    assert "| ch05_block | gelu |" in report and "`hero mutants ch05_block --exercise gelu" in report
    assert hero("mutants", "ch99_nothing").returncode == 2

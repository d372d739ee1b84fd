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


def _on_a_terminal(arguments, timeout=120):
    """What Python run with `arguments` (a list) or a snippet (a string) writes to stderr when
    stderr is a terminal."""
    import fcntl
    import os
    import pty
    import struct
    import termios

    controller, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 120, 0, 0))
    arguments = ["-c", arguments] if isinstance(arguments, str) else arguments
    run = subprocess.Popen([sys.executable, *arguments], stdout=subprocess.DEVNULL, stderr=terminal)
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
    run.wait(timeout=timeout)
    os.close(controller)
    return seen.decode("utf-8", "replace")


def test_hero_grade_shows_a_progress_bar_with_eta_on_a_terminal():
    """On a terminal, stderr carries a bar with rate and ETA while grading runs, then a summary."""
    import re

    text = _on_a_terminal(["-m", "autograder.cli", "grade", str(SAMPLES / "reference"), str(SAMPLES / "stubs")],
                          timeout=300)
    assert re.search(r"grading 2 submission\(s\):.*\|.*\d+/\d+ \[\d\d:\d\d<\d\d:\d\d", text), text[-500:]
    assert "hero grade: 2 submission(s) graded in" in text


# --- hero demo's progress ----------------------------------------------------------------------


def test_demo_steps_show_their_time_and_count_while_they_run(tmp_path):
    """An nbgrader step without a count shows how long it has run, redrawn every second; one with
    a count moves while the command runs (the files it writes are polled), not only at its end,
    and its time keeps moving while the count stays."""
    import re

    uncounted = _on_a_terminal(
        "import sys; from autograder import progress\n"
        "progress.run_counting([sys.executable, '-c', 'import time; time.sleep(3.5)'], None, None, 'nbgrader export')")
    assert {"nbgrader export: 00:01", "nbgrader export: 00:02", "nbgrader export: 00:03"} <= set(
        part.strip() for part in uncounted.split("\r")), uncounted[-500:]
    writer = (f"import pathlib, time\nfor i in range(3):\n    time.sleep(2.5)\n"
              f"    pathlib.Path({str(tmp_path)!r}, str(i)).touch()\ntime.sleep(1.2)")
    counted = _on_a_terminal(
        "import sys, pathlib; from autograder import progress\n"
        f"progress.run_counting([sys.executable, '-c', {writer!r}], 3, "
        f"lambda: len(list(pathlib.Path({str(tmp_path)!r}).iterdir())), 'nbgrader autograde')")
    for done in (1, 2, 3):
        times = set(re.findall(rf" {done}/3 \[(\d\d:\d\d)", counted))
        assert len(times) >= (2 if done < 3 else 1), (done, times, counted[-800:])


def test_demo_prints_a_line_per_assignment_with_its_time_and_the_total(monkeypatch, tmp_path, capsys):
    """Each step stubbed (nbgrader, the release, the grade table): what the demo says around them."""
    import shutil

    from autograder import demo, registry

    chosen = {name: registry.ASSIGNMENTS[name] for name in ("ch01_tokens", "ch05_block")}
    monkeypatch.setattr(registry, "ASSIGNMENTS", chosen)
    monkeypatch.setattr(registry, "REPO_ROOT", tmp_path)  # the demo names its paths from there
    monkeypatch.setattr(demo, "ROOT", tmp_path / "build" / "demo")
    monkeypatch.setattr(demo.release, "build", lambda show_progress: None)  # the committed release is current
    monkeypatch.setattr(demo, "fresh_course", lambda: shutil.rmtree(demo.ROOT, ignore_errors=True))
    monkeypatch.setattr(demo, "nbgrader", lambda *args, **options: 1.5)

    def generate_samples(assignment):
        folder = tmp_path / "samples" / assignment.id
        for name in ("reference", "stubs"):
            (folder / name).mkdir(parents=True, exist_ok=True)
        return folder

    monkeypatch.setattr(demo, "generate_samples", generate_samples)
    failing = {"ch05_block"}  # a sample of chapter 5 graded unexpectedly
    monkeypatch.setattr(demo, "_show", lambda assignment, names, lang: int(assignment.id in failing))
    assert demo.run() == 1
    lines = capsys.readouterr().out.splitlines()
    steps = "generate_assignment 2 s, samples 0 s, autograde 2 s, generate_feedback 2 s, export 2 s"
    assert any(line.startswith("ch01_tokens: 2/2 samples graded as expected in ") and line.endswith(f"({steps})")
               for line in lines), lines
    assert any(line.startswith("ch05_block: 1/2 samples graded as expected in ") for line in lines), lines
    assert lines[-1].startswith("hero demo: done in ") and lines[-1].endswith("1 sample(s) NOT graded as expected")
    failing.clear()
    assert demo.run() == 0
    assert capsys.readouterr().out.splitlines()[-1].endswith("every sample graded as expected")


# --- hero lab list ------------------------------------------------------------------------------


def _lab_list(monkeypatch, capsys, labs_dir, recorded=None):
    """{lab: {mode: its line}} of `hero lab list`, with labs_dir as build/labs and `recorded` as the
    committed results (default: none)."""
    from autograder import cli
    from hero_transformer.labs import runner

    monkeypatch.setenv("HERO_LABS_DIR", str(labs_dir))
    monkeypatch.setattr(runner, "RECORDED", recorded or labs_dir / "no-records")
    assert cli.main(["lab", "list"]) == 0
    listed = {}
    for line in capsys.readouterr().out.splitlines():
        if not line.startswith(" "):
            modes = listed.setdefault(line.split()[0], {})
        else:
            mode, rest = line.strip().split(":", 1)
            modes[mode] = rest.strip()
    return listed


def test_lab_list_states_a_measured_time_for_every_quick_and_full_mode(monkeypatch, tmp_path, capsys):
    """Quick: the committed results' own time (a whole run of every seed); full: the committed
    results' where a GPU ran them, else benchmarks/lab_times.json's estimate for the current setting."""
    import re

    from autograder import lab_times
    from hero_transformer import labs
    from hero_transformer.labs import runner

    measured = lab_times.measured()  # benchmarks/lab_times.json, schema-checked
    assert measured["machine"]["cpus"] >= 1 and measured["corpus"] in ("full", "fixture")
    listed = _lab_list(monkeypatch, capsys, tmp_path, runner.RECORDED)  # no run saved here
    assert list(listed) == list(labs.all_labs())
    committed = r"\d+ runs \(\d+ seeds\)  \d.* summed over its \d+ runs, \d+ torch threads? each, (cpu|cuda) \(the committed results\)"
    estimate = (r"\d+ runs \(\d+ seeds\)  about \d+ (s|min|h \d\d min) on a \d+-core CPU, \d+ torch threads? "
                r"\(measured \d{4}-\d\d-\d\d(, under load [\d.]+: slower than on an idle machine)?\)")
    for name in labs.all_labs():
        assert re.fullmatch(committed, listed[name]["quick"]), (name, listed[name]["quick"])
        assert re.fullmatch(f"{committed}|{estimate}", listed[name]["full"]), (name, listed[name]["full"])


def test_lab_times_refuses_a_file_off_its_schema_and_a_measurement_of_another_setting(monkeypatch, tmp_path):
    import pytest

    from autograder import lab_times
    from hero_transformer import labs
    from hero_transformer.labs import runner

    good = lab_times.measured()
    lab = labs.get("depth_placement")
    bad = tmp_path / "lab_times.json"
    monkeypatch.setattr(lab_times, "MEASURED", bad)
    lab_times.measured.cache_clear()
    try:
        broken = {**good, "labs": {"depth_placement": {"full": {**good["labs"]["depth_placement"]["full"],
                                                                  "seconds": -1}}}}
        bad.write_text(json.dumps(broken), encoding="utf-8")
        with pytest.raises(ValueError, match="lab_times.json"):
            lab_times.measured()
        lab_times.measured.cache_clear()
        other = {**good["labs"]["depth_placement"]["full"], "setting": {**lab.settings["full"], "steps": 1}}
        bad.write_text(json.dumps({**good, "labs": {"depth_placement": {"full": other}}}), encoding="utf-8")
        monkeypatch.setenv("HERO_LABS_DIR", str(tmp_path / "labs"))
        # No committed run either, so only the estimate could speak, and it is for another setting.
        monkeypatch.setattr(runner, "recorded_results", lambda lab, mode: None)
        assert lab_times.describe(lab, "full") == "time not measured"
    finally:
        lab_times.measured.cache_clear()


def test_lab_list_shows_the_time_of_a_run_saved_here(monkeypatch, tmp_path, capsys):
    from hero_transformer import labs

    lab = labs.get("depth_placement")
    saved = tmp_path / lab.name / "quick" / "results.json"
    saved.parent.mkdir(parents=True)
    results = {"setting": lab.settings["quick"], "seconds": 232.4, "device": "cpu", "threads": 2, "claims": [],
               "runs": {}}
    saved.write_text(json.dumps(results), encoding="utf-8")
    line = _lab_list(monkeypatch, capsys, tmp_path)[lab.name]["quick"]
    assert line == f"18 runs (3 seeds)  3 min 52 s as run here (cpu, 2 torch threads; {saved})", line
    saved.write_text(json.dumps({**results, "setting": {**lab.settings["quick"], "steps": 1}}), encoding="utf-8")
    line = _lab_list(monkeypatch, capsys, tmp_path)[lab.name]["quick"]  # another setting's run: not its time
    assert "as run here" not in line and "measured" in line, line
    recorded = tmp_path / "recorded"
    (recorded / "quick").mkdir(parents=True)
    from hero_transformer.labs import runner

    grid = {run.key: {"params": run.params} for run, _ in runner.seeded_runs(lab.settings["quick"], lab.runs)}
    (recorded / "quick" / f"{lab.name}.json").write_text(json.dumps({**results, "threads": 1, "runs": grid}),
                                                       encoding="utf-8")
    line = _lab_list(monkeypatch, capsys, tmp_path, recorded)[lab.name]["quick"]  # no run here: the committed one's
    assert line == "18 runs (3 seeds)  3 min 52 s summed over its 18 runs, 1 torch thread each, cpu (the committed results)", line

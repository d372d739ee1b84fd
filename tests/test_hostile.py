"""Hostile submissions gain nothing, cost at most their own items, leak nothing and change nothing
outside, graded in one batch with honest submissions through `hero grade`, `python -m pytest
--hero-submission` and `nbgrader autograde`, as root and as an ordinary user (tests/hostile_batch.py
runs each batch)."""

import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from autograder import engine, hostile, registry, samples
from autograder.report import looks_like_a_command
from autograder.sandbox import WorkerPool, bubblewrap_works

from conftest import SAMPLES, SUMMARY, needs_bubblewrap

ASSIGNMENT = registry.ASSIGNMENTS["ch05_block"]
BATCH = Path(__file__).with_name("hostile_batch.py")
TEST_USER = "hero-grader-test"
PATHS = ("hero", "nbgrader", "pytest")
# what must never appear in a report or feedback: besides the batch's own secrets
# (escape codes appear raw in an nbgrader notebook and as \u001b in JSON; the worker's own frames
# and paths are the grader's business)
FORBIDDEN_TEXT = ("BEGIN SOLUTION", "BEGIN HIDDEN TESTS", "hidden_check(", "SQLite format 3", hostile.LEAK_MARK,
                  "\x1b", "\\u001b", "\u202e", "hero-worker")


def _run_batch(tmp, command_prefix=()):
    out = tmp / "result.json"
    done = subprocess.run([*command_prefix, sys.executable, str(BATCH), str(tmp / "work"), str(out)],
                          capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
    return json.loads(out.read_text(encoding="utf-8"))


def _traversable_by_others(path):
    return os.stat(path).st_mode & 0o001


def _as_user_prefix(user, workdir):
    """Run as `user`, with the repository and the Python environment made reachable: a folder on the
    way to them that others may not pass (/root, say) is replaced by an empty one, in a mount namespace
    of this run only, with just those paths bound back in."""
    needed = sorted({str(registry.REPO_ROOT), str(Path(sys.prefix).resolve()), str(Path(sys.base_prefix).resolve())})
    argv = ["bwrap", "--dev-bind", "/", "/"]
    covered = set()
    for path in needed:
        for folder in reversed(Path(path).parents):
            if str(folder) != "/" and str(folder) not in covered and not _traversable_by_others(folder):
                covered.add(str(folder))
                argv += ["--perms", "0755", "--tmpfs", str(folder)]
                for inner in needed:
                    if Path(inner).is_relative_to(folder):
                        argv += [arg for step in reversed(Path(inner).parents) if step.is_relative_to(folder)
                                 and step != folder for arg in ("--perms", "0755", "--dir", str(step))]
                        argv += ["--bind", inner, inner]
                break
    entry = pwd.getpwnam(user)
    return argv + ["--chdir", str(workdir), "--setenv", "HOME", str(workdir), "--",
                   "setpriv", f"--reuid={entry.pw_uid}", f"--regid={entry.pw_gid}", "--clear-groups",
                   "--inh-caps=-all", "--bounding-set=-all"]


def _ensure_user(user):
    try:
        pwd.getpwnam(user)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", user], check=True)


@pytest.fixture(scope="module")
def batches(tmp_path_factory):
    """{(path, user): that batch's results}: as root, and as an ordinary user where this runs as root."""
    if not bubblewrap_works():
        pytest.skip("hostile submissions are graded with bubblewrap only")
    found = {}
    as_root = tmp_path_factory.mktemp("hostile-first")
    first = _run_batch(as_root)
    user = "root" if first["uid"] == 0 else pwd.getpwuid(first["uid"]).pw_name
    found.update({(path, user): first for path in PATHS})
    if first["uid"] == 0:
        _ensure_user(TEST_USER)
        # pytest's own temporary root is private to root; the user works in a folder of its own
        tmp = Path(tempfile.mkdtemp(prefix="hero-hostile-user-"))
        shutil.chown(tmp, TEST_USER)
        try:
            second = _run_batch(tmp, _as_user_prefix(TEST_USER, tmp))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        assert second["uid"] == pwd.getpwnam(TEST_USER).pw_uid
        found.update({(path, TEST_USER): second for path in PATHS})
    return found


def _verdicts(result, path):
    """{submission: list of what is wrong with it}; empty lists mean it gained nothing and lost only its own."""
    reports = result[path]
    problems = {}
    for attempt in ASSIGNMENT.hostile():
        if attempt.id not in result["attempts"]:
            continue
        report, wrong = reports[attempt.id], []
        scores = report["scores"]
        for item in attempt.targets(ASSIGNMENT):
            if scores.get(item, 0) != 0:
                wrong.append(f"earned {scores[item]} on {item}")
        full = ASSIGNMENT.points()
        if set(scores) - set(full):  # graded as another assignment: its notebook chose
            wrong.append(f"reported items of another assignment: {sorted(set(scores) - set(full))}")
        lost = {item for item, points in full.items() if scores.get(item, 0) < points}
        if lost - attempt.may_cost(ASSIGNMENT, path):
            wrong.append(f"lost items beyond its own: {sorted(lost - attempt.may_cost(ASSIGNMENT, path))}")
        wrong += _leaks(result, report, path)
        problems[attempt.id] = wrong
    return problems


def _leaks(result, report, path=None):
    text = report["text"]
    found = [f"its report holds {secret!r}" for secret in result["secrets"] + list(FORBIDDEN_TEXT) if secret in text]
    # no front end's report holds a CI workflow command, at a line's start or not (engine.printable)
    found += [f"a line of its report is a CI workflow command: {line[:80]!r}"
              for line in text.splitlines() if looks_like_a_command(line)]
    if report.get("extra_credit"):
        found.append(f"extra credit in the gradebook: {report['extra_credit']}")
    return found


def _honest_problems(result, path):
    points = ASSIGNMENT.points()
    expected = {
        "honest_reference": points,
        "honest_stubs": {item: 0 for item in points},
        "honest_post_ln": {item: (0 if item == "block" else value) for item, value in points.items()},
    }
    wrong = {}
    for name, scores in expected.items():
        got = {item: result[path][name]["scores"].get(item, 0) for item in points}
        if got != scores:
            wrong[name] = {item: got[item] for item in points if got[item] != scores[item]}
    return wrong


@needs_bubblewrap
@pytest.mark.parametrize("path", PATHS)
def test_every_attempt_gains_nothing_as_every_user(batches, path):
    for (batch_path, user), result in batches.items():
        if batch_path != path:
            continue
        failures = {attempt: wrong for attempt, wrong in _verdicts(result, path).items() if wrong}
        assert not failures, f"{path} as {user}: {failures}"


@needs_bubblewrap
@pytest.mark.parametrize("path", PATHS)
def test_honest_submissions_in_the_batch_get_exactly_their_scores(batches, path):
    for (batch_path, user), result in batches.items():
        if batch_path == path:
            assert _honest_problems(result, path) == {}, f"{path} as {user}"
            assert not _leaks(result, result[path]["honest_reference"], path)


@needs_bubblewrap
def test_nothing_outside_the_submissions_changed(batches):
    for (_, user), result in batches.items():
        assert result["outside_writes"] == [], user
        assert result["received"] == [], f"a submission reached a port on the grading machine ({user})"


@needs_bubblewrap
def test_nbgrader_runs_to_the_end_and_skips_only_what_it_cannot_process(batches):
    for (path, user), result in batches.items():
        if path != "nbgrader":
            continue
        skipped = {name for name, report in result["nbgrader"].items() if report["skipped"]}
        assert skipped == {a.id for a in ASSIGNMENT.hostile() if a.nbgrader_skips}, user
        # every other submission has a grade for every cell
        for name, report in result["nbgrader"].items():
            if name not in skipped:
                assert set(report["scores"]) == set(ASSIGNMENT.points()), (user, name)


@needs_bubblewrap
def test_the_grader_reports_its_confinement(batches):
    for (path, user), result in batches.items():
        if path == "hero":
            report = result["hero"]["honest_reference"]
            assert report["isolation"] == "bubblewrap"
            assert "no capabilities, no_new_privs, seccomp" in report["limits"], report["limits"]
            assert not report["limits"].startswith("uid 0,")


@needs_bubblewrap
def test_hostile_catalogue_summary(batches):
    lines = []
    for (path, user), result in sorted(batches.items()):
        verdicts = _verdicts(result, path)
        wins = sum(1 for wrong in verdicts.values() if wrong)
        honest = "honest scores exact" if not _honest_problems(result, path) else "HONEST SCORES CHANGED"
        lines.append(f"{path} as {user}: {wins} wins of {len(verdicts)} attempts, {honest}")
    skipped = len(ASSIGNMENT.hostile()) - len(next(iter(batches.values()))["attempts"])
    SUMMARY["hostile"] = ("hostile catalogue (" + str(len(ASSIGNMENT.hostile())) + " attempts"
                          + (f", {skipped} skipped: no pids cgroup" if skipped else "") + "): " + " · ".join(lines))
    assert len(ASSIGNMENT.hostile()) >= 40
    assert all(" 0 wins " in line and "exact" in line for line in lines), lines
    assert len(batches) == 2 * len(PATHS) or os.geteuid() != 0, "as root, both users must have run"


@needs_bubblewrap
def test_no_line_pytest_printed_is_a_workflow_command(batches):
    """The pytest run of the batch, in a GitHub job: its output is wrapped in ::stop-commands::
    and its resume token, and inside no student text starts a line with a workflow command."""
    for (path, user), result in batches.items():
        if path != "pytest":
            continue
        assert result["pytest_exit"] == 1, user
        lines = result["pytest_output"].splitlines()
        commands = [line for line in lines if looks_like_a_command(line)]
        token = lines[0].removeprefix("::stop-commands::")
        assert lines[0].startswith("::stop-commands::") and len(token) == 32, (user, lines[:2])
        assert commands == [lines[0], f"::{token}::"] and lines[-1] == f"::{token}::", (user, commands[:5])
        assert "workflow_commands" in result["pytest_output"]  # the attempts were there to be printed
        assert not [secret for secret in result["secrets"] if secret in result["pytest_output"]], user


@needs_bubblewrap
def test_the_file_attacks_are_real_without_bubblewrap(tmp_path, monkeypatch, source_unread):
    """Proof the other way: under plain process isolation the file-reading attempts do win points,
    so it is the sandbox that stops them (docs/grading.md says to trust only bubblewrap). Their bodies
    call open and exec, which reach.py names first: the source is not read here, so that what is
    proven is the sandbox's part."""
    monkeypatch.setenv("HERO_SANDBOX", "process")
    attempts = [a for a in ASSIGNMENT.hostile() if a.id in ("read_reference", "read_hidden_tests")]
    folders = [hostile.build(ASSIGNMENT, a, tmp_path / a.id, SAMPLES, **samples.default_hostile_values(tmp_path))
               for a in attempts]
    pool = WorkerPool(size=1)
    try:
        reports = engine.grade_many(folders, "ch05_block", pool=pool)
    finally:
        pool.close()
    for attempt, report in zip(attempts, reports):
        assert report.isolation == "process"
        assert report.item(attempt.target).score == report.item(attempt.target).max_score

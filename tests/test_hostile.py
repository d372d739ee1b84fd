"""Hostile submissions gain nothing, cost at most their own items, and change nothing outside."""

import os
import socket
import threading
from pathlib import Path

import pytest

from autograder import engine, hostile, registry
from autograder.sandbox import WorkerPool, cgroups_work

from conftest import SAMPLES, SUMMARY, needs_bubblewrap

SECRET_NAME = "HERO_TEST_SECRET"
# a real fork bomb is run only where a pids cgroup bounds it; elsewhere it would take the machine down
ATTEMPTS = [a for a in hostile.CATALOGUE if cgroups_work() or not a.needs_process_limit]


@pytest.fixture(scope="module")
def listener():
    """A port on this machine that the network attempt tries to reach; records any connection."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.2)
    received = []
    stop = threading.Event()

    def accept():
        while not stop.is_set():
            try:
                connection, _ = server.accept()
                received.append(connection.recv(100))
                connection.close()
            except OSError:
                pass

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1], received
    stop.set()
    thread.join()
    server.close()


@pytest.fixture(scope="module")
def graded(tmp_path_factory, listener):
    """Every attempt and an honest control, graded in one run with a fresh pool."""
    if os.environ.get("HERO_SANDBOX", "auto") == "process":
        pytest.skip("hostile submissions are graded with bubblewrap only")
    root = tmp_path_factory.mktemp("hostile")
    marker = root / "outside" / "pwned.txt"
    marker.parent.mkdir()
    port, received = listener
    folders = [hostile.build(attempt, root / "submissions" / attempt.id, repo=registry.REPO_ROOT, home=Path.home(),
                             marker=marker, secret_name=SECRET_NAME, port=port)
               for attempt in ATTEMPTS]
    control = root / "submissions" / "control"
    import shutil

    shutil.copytree(SAMPLES / "reference", control)
    os.environ[SECRET_NAME] = str(engine.expected_answer("normalised_variance"))
    pool = WorkerPool()
    try:
        reports = engine.grade_many(folders + [control], "ch05_block", pool=pool, timeout=3)
    finally:
        pool.close()
        del os.environ[SECRET_NAME]
    by_id = dict(zip([a.id for a in ATTEMPTS] + ["control"], reports))
    return by_id, marker, received


@needs_bubblewrap
def test_control_submission_is_untouched(graded):
    reports, _, _ = graded
    assert reports["control"].score == reports["control"].max_score
    assert reports["control"].isolation == "bubblewrap"


@needs_bubblewrap
@pytest.mark.parametrize("attempt", hostile.CATALOGUE, ids=lambda a: a.id)
def test_attempt_gains_nothing_and_costs_at_most_its_own_items(graded, attempt):
    if attempt not in ATTEMPTS:
        pytest.skip("no writable pids cgroup here: a fork bomb would not be bounded")
    reports, _, _ = graded
    report = reports[attempt.id]
    lost = {item.id for item in report.items if item.score < item.max_score}
    if attempt.target != "*":
        assert report.item(attempt.target).score == 0, "the attempt earned points for a wrong answer"
    assert lost <= attempt.may_cost, f"{attempt.id} cost items beyond its own: {sorted(lost - attempt.may_cost)}"


@needs_bubblewrap
def test_nothing_outside_the_submissions_changed(graded):
    _, marker, received = graded
    assert not marker.exists()
    assert not (Path.home() / "hero-pwned.txt").exists()
    assert not (registry.REPO_ROOT / "hero-pwned.txt").exists()
    assert not (marker.parent.parent / "submissions" / "hero-pwned.txt").exists()
    assert received == [], "a submission reached a port on the grading machine"


@needs_bubblewrap
def test_hostile_catalogue_summary(graded):
    reports, _, _ = graded
    clean = [a for a in ATTEMPTS
             if (a.target == "*" or reports[a.id].item(a.target).score == 0)
             and {i.id for i in reports[a.id].items if i.score < i.max_score} <= a.may_cost]
    skipped = len(hostile.CATALOGUE) - len(ATTEMPTS)
    SUMMARY["hostile"] = (f"hostile {len(clean)}/{len(ATTEMPTS)} gained nothing"
                          + (f" ({skipped} skipped: no pids cgroup)" if skipped else "")
                          + f" (isolation: {reports['control'].isolation}; limits: {reports['control'].limits})")
    assert len(hostile.CATALOGUE) >= 15 and len(clean) == len(ATTEMPTS)


@needs_bubblewrap
def test_the_file_attacks_are_real_without_bubblewrap(tmp_path, monkeypatch):
    """Proof the other way: under plain process isolation the file-reading attempts do win points,
    so it is the sandbox that stops them above (docs/grading.md says to trust only bubblewrap)."""
    monkeypatch.setenv("HERO_SANDBOX", "process")
    attempts = [a for a in hostile.CATALOGUE if a.id in ("read_reference", "read_hidden_tests")]
    folders = [hostile.build(a, tmp_path / a.id, repo=registry.REPO_ROOT, home=Path.home(), marker=tmp_path / "m",
                             secret_name=SECRET_NAME, port=9) for a in attempts]
    pool = WorkerPool(size=1)
    try:
        reports = engine.grade_many(folders, "ch05_block", pool=pool)
    finally:
        pool.close()
    for attempt, report in zip(attempts, reports):
        assert report.isolation == "process"
        assert report.item(attempt.target).score == report.item(attempt.target).max_score

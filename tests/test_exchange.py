"""The hub's collect (autograder/exchange.py) without a hub: what a student can do to their own
inbound folder after submitting.  The student is the user running the test, so it runs as root
and as anyone; tests/test_hub.py runs the same exchange with real students on a real hub."""

import datetime
import os
import pwd
import secrets
import subprocess
import sys
import time

import pytest

ASSIGNMENT = "ch05_block"
ME = pwd.getpwuid(os.geteuid()).pw_name


@pytest.fixture
def course(tmp_path):
    """A course root whose collect is the hero exchange, with no clock skew allowed."""
    exchange = tmp_path / "exchange"
    inbound = exchange / "hero" / "inbound"
    inbound.mkdir(parents=True)
    root = tmp_path / "course"
    root.mkdir()
    (root / "nbgrader_config.py").write_text(
        "c = get_config()\n"
        "c.CourseDirectory.course_id = 'hero'\n"
        f"c.CourseDirectory.db_url = 'sqlite:///{root / 'gradebook.db'}'\n"
        f"c.Exchange.root = {str(exchange)!r}\n"
        "c.ExchangeFactory.collect = 'autograder.exchange.HeroExchangeCollect'\n"
        "c.HeroExchangeCollect.clock_skew = 1\n"
        "c.HeroExchangeCollect.submit_seconds = 0\n", encoding="utf-8")
    return root, inbound


def submit(inbound, secret=None):
    """An inbound folder as nbgrader's submit makes it; returns the folder."""
    when = datetime.datetime.now(datetime.timezone.utc)
    stamp = when.strftime("%Y-%m-%d %H:%M:%S.%f UTC")
    folder = inbound / f"{ME}+{ASSIGNMENT}+{stamp}+{secrets.token_hex(6)}"
    (folder / "hero_transformer").mkdir(parents=True)
    (folder / "hero_transformer" / "model.py").write_text("# the student's work\n", encoding="utf-8")
    (folder / f"{ASSIGNMENT}.ipynb").write_text("{}", encoding="utf-8")
    (folder / "timestamp.txt").write_text(stamp, encoding="utf-8")
    (folder / "submission_secret.txt").write_text(secrets.token_hex(64) if secret is None else secret,
                                                  encoding="utf-8")
    return folder


def collect(root):
    env = {**os.environ, "PATH": f"{os.path.dirname(sys.executable)}:{os.environ.get('PATH', '')}"}  # alembic
    done = subprocess.run([sys.executable, "-m", "nbgrader", "collect", ASSIGNMENT, "--update"], cwd=root,
                          capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    collected = root / "submitted" / ME / ASSIGNMENT
    stamp = (collected / "timestamp.txt").read_text(encoding="utf-8") if collected.is_dir() else None
    return stamp, done.stderr


def test_a_file_rewritten_after_submission_is_refused_and_the_earlier_submission_kept(course):
    root, inbound = course
    honest = submit(inbound)
    time.sleep(1.5)
    late = submit(inbound)
    time.sleep(2.5)  # past the allowed skew: the student edits the submitted file in place
    (late / "hero_transformer" / "model.py").write_text("# written after the due date\n", encoding="utf-8")
    stamp, log = collect(root)
    assert "changed after it was submitted" in log, log[-3000:]
    assert stamp == (honest / "timestamp.txt").read_text(encoding="utf-8"), log[-3000:]


def test_a_hard_link_is_refused(course):
    root, inbound = course
    folder = submit(inbound)
    elsewhere = root.parent / "model.py"
    elsewhere.write_text("# edited from outside the exchange\n", encoding="utf-8")
    (folder / "hero_transformer" / "model.py").unlink()
    os.link(elsewhere, folder / "hero_transformer" / "model.py")
    stamp, log = collect(root)
    assert stamp is None and "is a hard link" in log, log[-3000:]


@pytest.mark.parametrize("secret", ["", "\udcff\udcfe".encode("utf-8", "surrogateescape").decode("latin-1"),
                                    "not hex at all"])
def test_a_submission_secret_that_release_feedback_cannot_use_is_refused(course, secret):
    root, inbound = course
    folder = submit(inbound)
    (folder / "submission_secret.txt").write_bytes(secret.encode("latin-1"))
    stamp, log = collect(root)
    assert stamp is None and "submission_secret.txt" in log, log[-3000:]


def test_an_honest_submission_is_collected(course):
    root, inbound = course
    folder = submit(inbound)
    stamp, log = collect(root)
    assert stamp == (folder / "timestamp.txt").read_text(encoding="utf-8"), log[-3000:]

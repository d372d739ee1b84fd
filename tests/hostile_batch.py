"""Grade every hostile attempt in one batch with honest submissions, through both front ends.

    python tests/hostile_batch.py WORKDIR OUT.json

builds the batch under WORKDIR, grades it with `hero grade` (the CLI) and with
`nbgrader autograde` (a fresh course root), and writes what came back to OUT.json:
per path, every submission's item scores and the full text of its report.
tests/test_hostile.py runs it as root and as an ordinary user and judges the result;
it is a script so that the ordinary user's run holds nothing of the pytest process.
"""

import json
import os
import secrets
import shutil
import socket
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from autograder import hostile, registry, samples  # noqa: E402
from autograder.sandbox import cgroups_work  # noqa: E402

ASSIGNMENT = registry.ASSIGNMENTS["ch05_block"]
TIMEOUT = "3"
SECRET_NAME = "HERO_GRADER_SECRET"
VICTIM = "victim-secret-"
# honest submissions of the batch and the score each earns on its own
HONEST = {"honest_reference": "reference", "honest_stubs": "stubs", "honest_post_ln": "post_ln"}


def attempts():
    # a real fork bomb is run only where a pids cgroup bounds it; elsewhere it would take the machine down
    return [a for a in ASSIGNMENT.hostile() if cgroups_work() or not a.needs_process_limit]


def listen():
    """A port on this machine that the network attempt tries to reach; records any connection."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    received = []

    def accept():
        while True:
            try:
                connection, _ = server.accept()
            except OSError:
                return
            received.append(connection.recv(100).decode("latin-1"))
            connection.close()

    threading.Thread(target=accept, daemon=True).start()
    return server, received


def build_batch(into: Path, course: Path, marker: Path, port: int, victim_secret: str):
    """Every attempt and the honest submissions as folders of `into`; the victim holds a secret."""
    into.mkdir(parents=True, exist_ok=True)
    values = dict(repo=registry.REPO_ROOT, course=course, home=Path.home(), marker=marker, secret_name=SECRET_NAME,
                  port=port, victim=VICTIM)
    generated = samples.write(into.parent / "samples", [ASSIGNMENT], with_hostile=False)[ASSIGNMENT.id]
    for attempt in attempts():
        hostile.build(ASSIGNMENT, attempt, into / attempt.id, generated, **values)
    for name, sample in HONEST.items():
        shutil.copytree(generated / sample, into / name)
    model = into / "honest_reference" / registry.PACKAGE / "model.py"
    model.write_text(f"# {victim_secret}\n" + model.read_text(encoding="utf-8"), encoding="utf-8")


def grade_with_hero(folders):
    done = subprocess.run([sys.executable, "-m", "autograder.cli", "grade", "--format", "json", "--timeout", TIMEOUT,
                           "--assignment", ASSIGNMENT.id, *map(str, folders)], capture_output=True, text=True,
                          cwd=registry.REPO_ROOT)
    if done.returncode not in (0, 1):
        raise SystemExit(f"hero grade failed ({done.returncode}):\n{done.stderr[-3000:]}")
    reports = json.loads(done.stdout)
    reports = reports if isinstance(reports, list) else [reports]
    return {Path(r["submission"]).name: {"scores": {i["id"]: i["score"] for i in r["items"]},
                                          "text": json.dumps(r, ensure_ascii=False), "limits": r["limits"],
                                          "isolation": r["isolation"]} for r in reports}


def nbgrader(root, *args):
    done = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=root, capture_output=True, text=True)
    return done


def grade_with_nbgrader(course: Path, names):
    done = nbgrader(course, "autograde", ASSIGNMENT.id, "--force", f"--HeroAutograde.timeout={TIMEOUT}")
    from nbgrader.api import Gradebook, MissingEntry

    results, rows = {}, []
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        for name in names:
            try:
                notebook = gradebook.find_submission_notebook(ASSIGNMENT.id, ASSIGNMENT.id, name)
            except MissingEntry:
                continue
            rows += [(name, grade.name, grade.auto_score, grade.extra_credit) for grade in notebook.grades]
    for name in names:
        report = course / "autograded" / name / ASSIGNMENT.id / "hero_report.json"
        text = report.read_text(encoding="utf-8") if report.exists() else ""
        scores = {cell: (score or 0) for student, cell, score, _ in rows if student == name}
        extra = [credit for student, _, _, credit in rows if student == name and credit]
        # what nbgrader shows the student: the grade cells' outputs (the cells' sources are their own)
        feedback = "".join(json.dumps(cell.get("outputs", []), ensure_ascii=False)
                           for p in (course / "autograded" / name).rglob("*.ipynb")
                           for cell in json.loads(p.read_text(encoding="utf-8"))["cells"])
        results[name] = {"scores": scores, "extra_credit": extra, "text": text + feedback,
                         "skipped": bool(text) and json.loads(text).get("skipped", False)}
    return results, done.returncode, done.stderr[-4000:]


def main(workdir: Path, out: Path):
    victim_secret = VICTIM + secrets.token_hex(8)
    grader_secret = "grader-secret-" + secrets.token_hex(8)
    os.environ[SECRET_NAME] = grader_secret
    marker = workdir / "outside" / "pwned.txt"
    marker.parent.mkdir(parents=True)
    server, received = listen()
    port = server.getsockname()[1]
    result = {"uid": os.getuid(), "secrets": [victim_secret, grader_secret], "attempts": [a.id for a in attempts()],
              "honest": HONEST}

    # through `hero grade`: a stand-in gradebook beside the batch, for the attempts that aim at one
    hero_course = workdir / "hero"
    hero_course.mkdir()
    sqlite3.connect(hero_course / "gradebook.db").execute("CREATE TABLE grade (extra_credit REAL)").connection.close()
    build_batch(hero_course / "submissions", hero_course, marker, port, victim_secret)
    names = sorted(p.name for p in (hero_course / "submissions").iterdir())
    result["hero"] = grade_with_hero([hero_course / "submissions" / name for name in names])

    # through `nbgrader autograde`, in a fresh course root
    course = workdir / "course"
    shutil.copytree(registry.COURSE_DIR, course / registry.SOURCE_DIR)
    shutil.copy(registry.REPO_ROOT / "nbgrader_config.py", course)
    generated = nbgrader(course, "generate_assignment", ASSIGNMENT.id, "--force")
    if generated.returncode:
        raise SystemExit(generated.stderr[-3000:])
    staging = workdir / "staging"
    build_batch(staging, course, marker, port, victim_secret)
    for name in names:
        target = course / "submitted" / name
        target.mkdir(parents=True)
        os.rename(staging / name, target / ASSIGNMENT.id)  # a rename keeps links, FIFOs and sockets as they are
    result["nbgrader"], result["nbgrader_exit"], result["nbgrader_log"] = grade_with_nbgrader(course, names)

    server.close()
    result["received"] = received
    result["outside_writes"] = [str(p) for p in (marker, registry.REPO_ROOT / "hero-pwned.txt", Path("/hero-pwned"),
                                                 Path.home() / "hero-pwned.txt") if p.exists()]
    out.write_text(json.dumps(result, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))

"""Grade every hostile attempt in one batch with honest submissions, through all three front ends.

    python tests/hostile_batch.py WORKDIR OUT.json

builds the batch under WORKDIR, grades it with `hero grade` (the CLI), with `python -m pytest
--hero-submission ...` (the pytest front end, from the repository root) and with
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

ASSIGNMENT = registry.ASSIGNMENTS["ch05_block"]
TIMEOUT = "3"
SECRET_NAME = "HERO_GRADER_SECRET"
VICTIM = "victim-secret-"
# honest submissions of the batch and the score each earns on its own
HONEST = {"honest_reference": "reference", "honest_stubs": "stubs", "honest_post_ln": "post_ln"}


def attempts():
    # every attempt, the fork bomb too: a task cannot start a process anywhere (confine.forbid_new_processes)
    return list(ASSIGNMENT.hostile())


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
    # each report's text as the CLI printed it (U+2028 and U+2029 escaped, like every other line break)
    return {Path(r["submission"]).name: {"scores": {i["id"]: i["score"] for i in r["items"]},
                                          "text": json.dumps(r, ensure_ascii=False).replace("\u2028", "\\u2028")
                                          .replace("\u2029", "\\u2029"), "limits": r["limits"],
                                          "isolation": r["isolation"]} for r in reports}


def grade_with_pytest(folders, junit: Path):
    """The pytest front end over the same folders, started from the repository root (whose
    pyproject.toml and tests/conftest.py it must not load) in a GitHub job, as CI would run it;
    the scores come from the JUnit properties of each item."""
    import re
    from xml.etree import ElementTree

    command = [sys.executable, "-m", "pytest", "--hero-assignment", ASSIGNMENT.id, "--hero-timeout", TIMEOUT,
               "--hero-lang", "en", f"--junitxml={junit}"]
    for folder in folders:
        command += ["--hero-submission", str(folder)]
    done = subprocess.run(command, capture_output=True, text=True, cwd=registry.REPO_ROOT,
                          env=dict(os.environ, GITHUB_ACTIONS="true"))
    if done.returncode not in (0, 1):
        raise SystemExit(f"pytest --hero-submission failed ({done.returncode}):\n{done.stdout[-3000:]}"
                         f"{done.stderr[-3000:]}")
    results = {Path(folder).name: {"scores": {}, "text": ""} for folder in folders}
    for case in ElementTree.parse(junit).getroot().iter("testcase"):
        # ch05_block[<folder>]::<item>, however junitxml splits it into classname and name
        address = "::".join(part for part in (case.get("classname"), case.get("name")) if part)
        found = re.fullmatch(r"(?:.*?)\[(?P<folder>[^\]]+)\]::(?P<item>.+)", address)
        if not found:
            raise SystemExit(f"unexpected test case {address!r}")
        properties = {p.get("name"): p.get("value") for p in case.iter("property")}
        result = results[found["folder"]]
        result["scores"][found["item"]] = float(properties["points"])
        result["text"] += ElementTree.tostring(case, encoding="unicode")
    # what pytest printed about each submission (its failures' sections) joins its report's text
    section = None
    for line in done.stdout.splitlines():
        header = re.fullmatch(r"_+ .*?\[(?P<folder>[^\]]+)\]::\S+ _+", line)
        if header:
            section = header["folder"]
        elif line.startswith("="):
            section = None
        if section in results:
            results[section]["text"] += line + "\n"
    return results, done.stdout, done.returncode


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
    # through `python -m pytest --hero-submission ...`, the same folders
    result["pytest"], result["pytest_output"], result["pytest_exit"] = grade_with_pytest(
        [hero_course / "submissions" / name for name in names], workdir / "pytest-junit.xml")

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

"""Autograde results kept by what was graded, so that a class run that stops resumes
(docs/grading.md, "A whole class at once").

A result's key is the SHA-256 of
- the submission: every regular file under submitted/<student>/<assignment>, by relative path,
  read without following links (what the safe copy refuses is part of it too);
- the assignment: its id and its source notebooks (what nbgrader restores locked cells from);
- the grader's version: the source of autograder/ and of the reference package.
So a result is reused only for the same bytes graded the same way; a resubmission, a new
release of the assignment or a changed grader grades again.  Results are JSON files written
atomically (a temporary file renamed into place): a run killed at any moment leaves each one
whole or absent, never half written.
"""

import hashlib
import json
import os
import tempfile
from functools import lru_cache
from pathlib import Path

from . import engine, registry, safefiles

MAX_FILE_BYTES = 20_000_000  # as the safe copy (a larger file is refused there, and named here)


@lru_cache(maxsize=None)
def grader_version():
    here = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(here.rglob("*.py")) + sorted((registry.REPO_ROOT / registry.PACKAGE).glob("*.py")):
        digest.update(str(path.relative_to(registry.REPO_ROOT)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def submission_digest(folder):
    """SHA-256 of a submission folder's regular files and of what in it was refused."""
    digest = hashlib.sha256()
    with safefiles.Folder(folder) as opened:
        # a walk over a limit stops, and its message joins `refused`: part of the digest, never silent
        found, refused = opened.files("", "", max_files=10_000)
        for relpath in sorted(found):
            try:  # a notebook as large as the grader reads one: its bytes, not a refusal, are its key
                data = opened.read(relpath, engine.MAX_NOTEBOOK_FILE_BYTES if relpath.endswith(".ipynb")
                                   else MAX_FILE_BYTES)
            except safefiles.Refused as exc:
                refused.append(str(exc))
                continue
            digest.update(b"F" + relpath.encode("utf-8", "surrogateescape") + b"\0"
                          + hashlib.sha256(data).digest())
        for problem in sorted(refused):
            digest.update(b"R" + problem.encode("utf-8", "surrogateescape") + b"\0")
    return digest.hexdigest()


def key(submission, assignment_id, source_notebooks):
    digest = hashlib.sha256(f"{assignment_id}\0{grader_version()}\0".encode())
    for path in sorted(source_notebooks):
        digest.update(Path(path).name.encode() + b"\0" + Path(path).read_bytes())
    digest.update(submission_digest(submission).encode())
    return digest.hexdigest()


class Ledger:
    """A folder of results, one JSON file per key."""

    def __init__(self, folder):
        self.folder = Path(folder)

    def get(self, result_key):
        try:
            return json.loads((self.folder / f"{result_key}.json").read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):  # absent, or not ours: graded again
            return None

    def put(self, result_key, data):
        self.folder.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=self.folder, prefix=".partial-")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(data, out, ensure_ascii=False)
                out.flush()
                os.fsync(out.fileno())
            os.replace(temporary, self.folder / f"{result_key}.json")
        except BaseException:
            os.unlink(temporary)
            raise

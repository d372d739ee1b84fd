"""Hostile submissions: code or files that try to win points they have not earned, or to
reach beyond their own submission.

A chapter's grading folder may hold a catalogue of attempts (its hostile.py: CATALOGUE,
plus WRONG_BODY and WRONG_ANSWER, the wrong body or answer each target hides behind); this
module builds their submissions.  Each attempt pairs its hostile code with a wrong answer for the items it targets, so
"gained nothing" is a plain check: the targets score 0, every other item keeps the
score an honest submission gets, nothing outside the submission changes, and nothing
secret shows up in any report.  An attempt whose trick works prints a line starting
with LEAK_MARK (it wrote to the worker, traced it, found another task's traces...), so
the tests look for that mark too.  tests/hostile_batch.py grades every attempt in one
batch with honest submissions, through `hero grade` and `nbgrader autograde`;
tests/test_hostile.py runs that batch as root and as an ordinary user.

Code templates may use {notebook} (the assignment's notebook name), {repo} (this repository), {course} (the course root of the
batch: its gradebook), {home}, {marker} (a path outside the submission the attempt
tries to write), {secret_name}, {port} and {victim} (the start of a secret that only
an honest submission of the same batch holds).
"""

import json
import os
import shutil
import socket
import stat
from dataclasses import dataclass
from pathlib import Path

from . import registry, release

LEAK_MARK = "HERO-LEAK"
PACKAGE, NOTEBOOK = "package", "notebook"  # targets: every exercise of the package, every answer


@dataclass(frozen=True)
class Attempt:
    id: str
    what: str
    # "module" (top of model.py), "exercise" (start of the target's body), "answer" (its cell)
    # or "file" (`code` names a recipe in FILE_RECIPES: links, FIFOs, devices, broken notebooks)
    where: str
    target: str  # an item id, PACKAGE, NOTEBOOK, or "" for an attempt that hides no wrong answer
    code: str
    needs_process_limit: bool = False  # safe to run only where a pids cgroup bounds it
    nbgrader_skips: bool = False  # nbgrader cannot process it: screened out there, whole

    def targets(self, assignment):
        """Items that must score 0: the wrong answers the attempt hides."""
        if self.target == PACKAGE:
            return {e.id for e in assignment.exercises}
        if self.target == NOTEBOOK:
            return {a.id for a in assignment.answers}
        return {self.target} if self.target else set()

    def may_cost(self, assignment, path="hero"):
        """Items an attempt may lose: its targets, every package exercise for code that runs when
        the package is imported (every exercise imports it), everything where nbgrader skips it."""
        every = {item.id for item in assignment.exercises + assignment.answers}
        if path == "nbgrader" and self.nbgrader_skips:
            return every
        if self.where == "module":
            return self.targets(assignment) | {e.id for e in assignment.exercises}
        return self.targets(assignment)


def _insert_at_body(text, fault, code):
    """Put `code` at the start of the fault's body inside model.py's text."""
    first_line = next(line for line in release._function_body(fault.function, "") if line.strip())
    lines = text.splitlines(keepends=True)
    index = next(i for i, line in enumerate(lines) if line.strip() == first_line.strip())
    indent = lines[index][: len(lines[index]) - len(lines[index].lstrip())]
    hostile = "".join(indent + line + "\n" if line else "\n" for line in code.splitlines())
    return "".join(lines[:index]) + hostile + "".join(lines[index:])


def build(assignment, attempt, dest: Path, samples: Path, **values):
    """Write the attempt's submission folder at `dest`; `values` fill the code template.

    The base is the reference sample under `samples` (one assignment's samples folder), or
    the sample of the fault that makes the target wrong."""
    chapter = assignment.part("hostile")
    # the mark is printed from two adjacent literals, so the attempt's own source never holds it
    code = attempt.code.format(leak=LEAK_MARK.replace("-", "' '-"), notebook=assignment.notebook_name, **values)
    wrong_body = attempt.where in ("module", "exercise") and attempt.target in chapter.WRONG_BODY
    fault = next(e for e in assignment.entries("fault") if e.id == chapter.WRONG_BODY[attempt.target]) \
        if wrong_body else None
    shutil.copytree(samples / (fault.sample if fault else "reference"), dest)
    if attempt.where in ("exercise", "module"):
        exercise = registry.exercise(fault.exercise) if fault else assignment.exercises[0]
        module_path = dest / registry.PACKAGE / f"{exercise.module}.py"
        text = module_path.read_text(encoding="utf-8")
        text = _insert_at_body(text, fault, code) if attempt.where == "exercise" else code + text
        module_path.write_text(text, encoding="utf-8")
    elif attempt.where == "answer":
        # the wrong value first: an attack that works would overwrite it
        release.replace_answers(dest / assignment.notebook_name,
                                {attempt.target: chapter.WRONG_ANSWER[attempt.target] + "\n" + code})
    else:
        recipe, relpath, *target = code.split(":", 2)
        FILE_RECIPES[recipe](dest / relpath, *target, answer=chapter.WRONG_ANSWER.get(attempt.target),
                             answer_id=attempt.target)
    return dest


def _replace(path):
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


def _link(path, target, **_):
    _replace(path)
    path.symlink_to(target)


def _relative_link(path, target, **_):
    _link(path, os.path.relpath(target, path.parent))


def _fifo(path, **_):
    os.mkfifo(path)


def _device(path, **_):
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 5))  # /dev/zero; root only
    except PermissionError:
        path.symlink_to("/dev/zero")


def _socket(path, **_):
    server, here = socket.socket(socket.AF_UNIX), os.getcwd()
    os.chdir(path.parent)  # a socket's path is limited to 107 bytes; its name alone is short
    try:
        server.bind(path.name)
    finally:
        os.chdir(here)
        server.close()  # the socket file stays


def _deep_notebook(path, **_):
    depth = 100_000
    path.write_text('{"nbformat": 4, "cells": ' + "[" * depth + "]" * depth + "}", encoding="utf-8")


def _old_schema(path, answer, answer_id, **_):
    release.replace_answers(path, {answer_id: answer})
    notebook = json.loads(path.read_text(encoding="utf-8"))
    graded = next(cell for cell in notebook["cells"] if cell["metadata"].get("nbgrader", {}).get("grade"))
    graded["metadata"]["nbgrader"]["schema_version"] = 1
    path.write_text(json.dumps(notebook), encoding="utf-8")


FILE_RECIPES = {"link": _link, "relative-link": _relative_link, "fifo": _fifo, "device": _device,
                "socket": _socket, "deep-notebook": _deep_notebook, "old-schema": _old_schema}

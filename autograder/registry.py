"""What a chapter's grading folder declares, and where the engine finds every chapter.

A chapter is graded from `autograder/chapters/<assignment id>/`, a Python package whose
`__init__.py` defines `ASSIGNMENT` (docs/adding-a-chapter.md).  The engine, worker, sandbox,
reports, release and nbgrader glue reach a chapter only through the `Assignment` found here,
so adding a chapter adds a folder and edits none of them.

Points live once, in the nbgrader metadata of the assignment's source notebook
(course/<assignment>/<assignment>.ipynb): nbgrader needs them there, and this module
reads them from there.  A test checks that every grade cell has an entry here and every
entry has a grade cell.
"""

import importlib
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable, Optional

REPO_ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "hero_transformer"
# nbgrader's directories under the course root (the repository)
SOURCE_DIR, RELEASE_DIR, SOLUTION_DIR = "course", "student", "solutions"
COURSE_DIR = REPO_ROOT / SOURCE_DIR
CHAPTERS_DIR = Path(__file__).resolve().parent / "chapters"
ASSIGNMENT_ID = re.compile(r"ch\d\d_[a-z0-9_]+\Z")  # also a safe file name inside the sandbox


@dataclass(frozen=True)
class Forbidden:
    """A shortcut the chapter forbids in an exercise, and how the grader sees it being taken:
    the aten operators it runs (whatever the route: an alias, getattr, an import inside the
    function, torch.ops), the construction of any nn.Module during the call, or (`autograd`)
    any use of automatic differentiation: an operator run by the autograd engine during a
    backward pass (Tensor.backward, torch.autograd.grad, torch.autograd.functional, torch.func's
    grad/vjp/jacrev) or under a forward-mode level (torch.autograd.forward_ad, torch.func.jvp/jacfwd)."""

    call: str  # the call as the feedback names it
    ops: tuple = ()
    builds_modules: bool = False
    autograd: bool = False


@dataclass(frozen=True)
class Exercise:
    """A stub in the package: `raise NotImplementedError('<id>')` in `target`."""

    id: str
    chapter: int
    target: str  # qualified name inside hero_transformer/<module>.py
    title_zh: str
    title_en: str
    forbids: tuple = ()
    module: str = "model"


@dataclass(frozen=True)
class Mistake:
    """A known wrong result of an answer: when a student's value is this one, the feedback
    names the mistake and the step to recheck (never the expected value)."""

    value: Callable  # (reference module, as for Answer.expected) -> the value this mistake gives
    zh: str
    en: str


@dataclass(frozen=True)
class Answer:
    """A value a student computes in an answer cell of the notebook."""

    id: str  # the grade_id of the hidden-test cell
    variable: str
    title_zh: str
    title_en: str
    expected: Callable  # (reference module) -> the expected value
    exact: bool = False  # integers and shapes compare exactly
    mistakes: tuple = ()  # Mistake entries, checked in order
    module: str = "model"  # the package module whose reference `expected` and the mistakes receive


@dataclass(frozen=True)
class Entry:
    """One body of a catalogue: a known misconception (fault), a correct body written
    differently from the reference (variant), or a correct result reached by a forbidden
    shortcut.  `function` has the signature of the exercise it replaces."""

    id: str
    exercise: str
    zh: str
    en: str
    function: Callable
    kind: str  # "fault", "correct" or "forbidden"

    @property
    def sample(self):
        """The sample folder's name: a fault's own id, `correct_<id>` or `forbidden_<id>`."""
        return self.id if self.kind == "fault" else f"{self.kind}_{self.id}"


def catalogue(kind):
    """A new catalogue and its decorator `@entry(exercise, zh, en=zh)`, which adds the
    function below it.  Catalogue bodies use only names model.py itself has (torch, math, F)."""
    entries = []

    def entry(exercise, zh, en=None):
        def register(function):
            entries.append(Entry(function.__name__, exercise, zh, en or zh, function, kind))
            return function
        return register
    return entries, entry


@dataclass(frozen=True)
class Assignment:
    id: str
    chapter: int
    exercises: tuple
    answers: tuple
    grading: str  # the chapter's grading package, autograder.chapters.<id>

    @property
    def notebook_name(self):
        return f"{self.id}.ipynb"

    @property
    def source_notebook(self):
        return COURSE_DIR / self.id / self.notebook_name

    def points(self):
        return grade_cell_points(self.source_notebook)

    def item(self, item_id):
        for entry in self.exercises + self.answers:
            if entry.id == item_id:
                return entry
        raise KeyError(item_id)

    def part(self, name):
        """One module of the grading folder (probes, properties, faults...), or None."""
        try:
            return importlib.import_module(f"{self.grading}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{self.grading}.{name}":
                raise
            return None

    @property
    def probes_file(self):
        """The worker-side file: cases, test doubles and probes (torch and the standard library only)."""
        return CHAPTERS_DIR / self.id / "probes.py"

    def entries(self, kind=None):
        """The fault, correct and forbidden catalogues, in that order (or one kind of them)."""
        found = []
        for name in ("faults", "variants", "forbidden"):
            module = self.part(name)
            found += list(getattr(module, "CATALOGUE", ())) if module else []
        return [entry for entry in found if kind is None or entry.kind == kind]

    def hostile(self):
        module = self.part("hostile")
        return tuple(getattr(module, "CATALOGUE", ())) if module else ()


@lru_cache(maxsize=None)
def _discover():
    found = {}
    for folder in sorted(CHAPTERS_DIR.iterdir()):
        if not (folder / "__init__.py").exists():
            continue
        if not ASSIGNMENT_ID.match(folder.name):
            raise ValueError(f"{folder}: a chapter folder is named chNN_name")
        assignment = importlib.import_module(f"autograder.chapters.{folder.name}").ASSIGNMENT
        if assignment.id != folder.name:
            raise ValueError(f"{folder} declares the assignment {assignment.id!r}")
        found[assignment.id] = assignment
    ids = [item.id for assignment in found.values() for item in assignment.exercises + assignment.answers]
    duplicated = sorted({item for item in ids if ids.count(item) > 1})
    if duplicated:  # a stub's message names its exercise: it must be unique across the course
        raise ValueError(f"item ids used by more than one chapter: {duplicated}")
    return found




def all_exercises():
    return tuple(e for assignment in _discover().values() for e in assignment.exercises)


def assignment_of(item_id):
    """The assignment that grades an exercise or answer id."""
    return next(a for a in _discover().values() if any(item.id == item_id for item in a.exercises + a.answers))


def exercise(exercise_id):
    return assignment_of(exercise_id).item(exercise_id)


def exercises_by_target():
    """{(module, qualified name): exercise} over every chapter: where each fence belongs."""
    return {(e.module, e.target): e for e in all_exercises()}


def find_assignment(folder: Path, assignment_id: Optional[str] = None) -> Assignment:
    """The assignment a submission folder belongs to: named, or told by its notebook."""
    assignments = _discover()
    if assignment_id is not None:
        if assignment_id not in assignments:
            raise KeyError(f"unknown assignment {assignment_id!r}; known: {', '.join(assignments)}")
        return assignments[assignment_id]
    for assignment in assignments.values():
        if (folder / assignment.notebook_name).exists() or folder.name == assignment.id:
            return assignment
    if len(assignments) == 1:
        return next(iter(assignments.values()))
    raise KeyError(f"cannot tell which assignment {folder} is; pass --assignment")


@lru_cache(maxsize=None)
def _points_cached(path: str, mtime: float):
    cells = json.loads(Path(path).read_text(encoding="utf-8"))["cells"]
    points = {}
    for cell in cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if meta.get("grade"):
            points[meta["grade_id"]] = float(meta["points"])
    return points


def grade_cell_points(notebook: Path):
    return dict(_points_cached(str(notebook), notebook.stat().st_mtime))


def __getattr__(name):
    # ASSIGNMENTS is found on first use, not at import: a chapter's folder imports this module
    if name == "ASSIGNMENTS":
        return _discover()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

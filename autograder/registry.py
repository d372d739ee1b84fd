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
import inspect
import json
import os
import re
import textwrap
import types
from dataclasses import dataclass
from functools import cached_property, lru_cache
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
    grad/vjp/jacrev) or under a forward-mode level (torch.autograd.forward_ad, torch.func.jvp/jacfwd);
    `functions`: torch functions seen by name through a TorchFunctionMode, for the composite operators
    the dispatcher decomposes into elementary ones before the operator watch sees them (torch.rms_norm,
    the math SDPA); `internals`: torch's own Python packages or functions ("torch._refs",
    "torch.nn.functional.multi_head_attention_forward") whose frames on the stack make any operator
    dispatched beneath them this call (probes.watching).  Every exercise that forbids anything also
    forbids INTERNAL_ROUTES (Exercise.__post_init__): the same result through torch's reference
    implementations or a compiler."""

    call: str  # the call as the feedback names it
    ops: tuple = ()
    builds_modules: bool = False
    autograd: bool = False
    functions: tuple = ()
    internals: tuple = ()
    call_zh: str = ""  # the call in the Chinese feedback, where it is words rather than code ("" = `call`)


SUBCLASS_DISPATCH = "torch.Tensor.__torch_dispatch__"  # the route probes.watching names for a subclass's handler
# the routes probes.watching names for an operator defined, or a kernel of torch's replaced, from Python by the
# code under test (torch.library, custom_op), and for a TorchDispatchMode of its own: either runs code with the
# operator watch set aside
LIBRARY_ROUTE = "torch.library"
MODE_ROUTE = "torch.utils._python_dispatch.TorchDispatchMode"
# the route named for a torch function the code under test calls while the operator watch is set aside by
# torch._C's dispatch guards (_DisableTorchDispatch, _ExcludeDispatchKeyGuard...) or with the mode popped
ASIDE_ROUTE = "torch._C"
# torch's own Python implementations of operators (reference implementations, decompositions, prims)
# and its compilers, tracers and exporters: each computes a forbidden result from elementary operators,
# or runs code the operator watch cannot trust (TorchScript, compiled kernels), so in an exercise that
# forbids anything, any operator dispatched beneath one of their frames is a forbidden use
INTERNAL_PACKAGES = ("torch._refs", "torch._decomp", "torch._prims", "torch._prims_common",
                     "torch._dynamo", "torch._inductor", "torch.compiler", "torch.fx", "torch.jit",
                     "torch._functorch._aot_autograd", "torch._functorch.aot_autograd",
                     "torch._functorch.partitioners", "torch._functorch.compilers", "torch._functorch.compile_utils",
                     "torch._functorch.python_key", "torch._functorch.fx_minifier", "torch._subclasses",
                     "torch._higher_order_ops", "torch.export", "torch._export", "torch.onnx", "torch._lazy",
                     # a tensor subclass's own __torch_dispatch__, a kernel registered from Python, a dispatch
                     # mode of one's own: each runs with the watch set aside
                     SUBCLASS_DISPATCH, LIBRARY_ROUTE, MODE_ROUTE, ASIDE_ROUTE)
INTERNAL_ROUTES = Forbidden(
    "torch's internal implementations or compilers (torch._refs / torch._decomp / torch._prims, "
    "torch.compile / torch.jit / torch.fx / torch.export), or code run where the grader's operator watch is set "
    "aside (a tensor subclass's __torch_dispatch__, an operator or kernel registered through torch.library, a "
    "TorchDispatchMode of your own, torch._C's dispatch guards)",
    internals=INTERNAL_PACKAGES,
    call_zh="torch 的内部参考实现或编译器（torch._refs / torch._decomp / torch._prims，"
            "torch.compile / torch.jit / torch.fx / torch.export），或在评分器的算子监视被绕开之处运行的代码"
            "（张量子类的 __torch_dispatch__、通过 torch.library 注册的算子或内核、你自己的 TorchDispatchMode、"
            "torch._C 的分派守卫）")


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
    # the contract besides the values (docs/grading.md, "The contract"): the inputs a call may leave
    # changed, and those whose memory its output may share (a view: "reshape may return a view");
    # any other input is read only and the output is new memory, never another call's
    may_change: tuple = ()
    may_share: tuple = ()

    def __post_init__(self):
        # what is forbidden is forbidden through torch's internals too (registry.INTERNAL_ROUTES)
        if self.forbids and INTERNAL_ROUTES not in self.forbids:
            object.__setattr__(self, "forbids", tuple(self.forbids) + (INTERNAL_ROUTES,))


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
    shortcut.  Written either as a whole function (`written`, with the signature of the
    exercise it replaces: where the mistake is a different algorithm) or as `edits`: (old, new)
    text replacements applied to the reference body, each `old` found there exactly once, so the
    catalogue reads as a list of mistakes and no copy of the reference can go stale."""

    id: str
    exercise: str
    zh: str
    en: str
    written: Optional[Callable]
    kind: str  # "fault", "correct" or "forbidden"
    # a forbidden body only: the internal route (a dotted torch name) its feedback must name, when it
    # takes the forbidden result through torch's internals (the call named is then INTERNAL_ROUTES')
    route: str = ""
    # a forbidden body only: it takes the shortcut in a thread or a forked process, which a task cannot
    # start (confine.forbid_new_processes), so it loses its exercise by raising, and its feedback must
    # hold this text, instead of failing the forbidden-call check
    raises: str = ""
    # a forbidden body only: it switches the watch off first (both its modes), so no hook of the
    # grader's runs while it takes the shortcut; reading its source (reach.py) is what costs it
    # the exercise, and its feedback names the line
    unseen: bool = False
    # a fault only: its words say what was observed, not what caused it, because bodies with other
    # mistakes give the same outputs on every case (a ledger short by 2d per block, whichever 2d);
    # feedback naming it is never wrong about the body (tests/test_feedback_names.py)
    observed: bool = False
    edits: tuple = ()

    @property
    def sample(self):
        """The sample folder's name: a fault's own id, `correct_<id>` or `forbidden_<id>`."""
        return self.id if self.kind == "fault" else f"{self.kind}_{self.id}"

    @cached_property
    def source(self):
        """The entry's function as source text (dedented)."""
        from . import release  # release reads this module: imported when first needed
        if self.written is not None:
            return textwrap.dedent(inspect.getsource(self.written))
        body = "\n".join(release.reference_body(exercise(self.exercise)))
        for old, new in self.edits:
            if body.count(old) != 1:
                raise ValueError(f"{self.kind} {self.id}: {old!r} is in the reference body of {self.exercise} "
                                 f"{body.count(old)} times, not once (the reference changed: rewrite the edit)")
            body = body.replace(old, new)
        return release.exercise_source(exercise(self.exercise), body.splitlines())

    def body(self, indent):
        """The entry's body as fence lines at `indent` (a sample's package)."""
        from . import release
        return release.body_lines(self.source, indent)

    @cached_property
    def function(self):
        """The callable: the written function, or the edited reference compiled (compiled_body)."""
        return self.written if self.written is not None else compiled_body(self.exercise, self.source, self.id)


def compiled_body(exercise_id, source, label):
    """A function's source (an exercise's, with another body) compiled against the reference
    module it belongs to: defined in a scratch copy of the module's namespace (so the module's own
    function is not replaced), then bound to the module's live globals, so that it sees what a
    probe sets on the module (a test double) as the module's own functions do."""
    from . import reference
    target = exercise(exercise_id)
    module = reference.load(target.module)
    scratch = dict(vars(module))
    exec(compile(source, f"<{label}>", "exec"), scratch)  # our own catalogue's or mutant's text
    defined = scratch[target.target.rpartition(".")[2]]
    function = types.FunctionType(defined.__code__, vars(module), defined.__name__, defined.__defaults__,
                                  defined.__closure__)
    function.__kwdefaults__, function.__qualname__ = defined.__kwdefaults__, defined.__qualname__
    return function


def catalogue(kind):
    """A new catalogue and its decorator `@entry(exercise, zh, en=zh)`, which adds the function
    below it; `entry.change(exercise, id, zh, en, (old, new), ...)` adds the reference body with
    those edits.  Catalogue bodies use only names the exercise's module itself has (torch, math, F)."""
    entries = []

    def entry(exercise, zh, en=None, **expected):  # expected: Entry.route, raises, unseen or observed
        def register(function):
            entries.append(Entry(function.__name__, exercise, zh, en or zh, function, kind, **expected))
            return function
        return register

    def change(exercise, ident, zh, en, *edits, **expected):
        if not edits or not all(isinstance(edit, tuple) and len(edit) == 2 for edit in edits):
            raise ValueError(f"{kind} {ident}: a change is one or more (old, new) pairs")
        entries.append(Entry(ident, exercise, zh, en, None, kind, edits=tuple(edits), **expected))
    entry.change = change
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


class UnknownAssignment(KeyError):
    """No assignment fits a submission folder, or the one named does not exist."""

    def __str__(self):
        return str(self.args[0])


class AmbiguousAssignment(UnknownAssignment):
    """More than one assignment fits a submission folder: the grader must name the one it grades."""


def _entries(folder: Path):
    """The names in a submission folder (names only: nothing is opened, no link is followed)."""
    try:
        return set(os.listdir(folder))
    except OSError:
        return set()


def fitting_assignments(folder: Path):
    """[(assignment, why)] for every assignment this folder looks like: it holds the assignment's
    notebook, or it is named like the assignment.  A guess from the submission's own files, so it
    chooses only where exactly one fits; an unattended grader names the assignment instead."""
    folder, names = Path(folder), _entries(folder)
    fits = []
    for assignment in _discover().values():
        reasons = []
        if assignment.notebook_name in names:
            reasons.append(f"it holds {assignment.notebook_name}")
        if folder.name == assignment.id:
            reasons.append(f"it is named {assignment.id}")
        if reasons:
            fits.append((assignment, " and ".join(reasons)))
    return fits


def find_assignment(folder: Path, assignment_id: Optional[str] = None) -> Assignment:
    """The assignment a submission folder is graded as: the one named (the grader's choice, which
    the folder's files never change), or, unnamed, the only one the folder fits.  Several that fit
    (two chapters' notebooks, a folder named like one chapter holding another's notebook) are
    refused: the submission does not get to choose."""
    assignments = _discover()
    if assignment_id is not None:
        if assignment_id not in assignments:
            raise UnknownAssignment(f"unknown assignment {assignment_id!r}; known: {', '.join(assignments)}")
        return assignments[assignment_id]
    fits = fitting_assignments(folder)
    if len(fits) == 1:
        return fits[0][0]
    if len(fits) > 1:
        listed = "; ".join(f"{assignment.id} ({why})" for assignment, why in fits)
        raise AmbiguousAssignment(f"{folder} fits more than one assignment: {listed}; pass --assignment to name "
                                  f"the one it is graded as")
    if len(assignments) == 1:
        return next(iter(assignments.values()))
    raise UnknownAssignment(f"cannot tell which assignment {folder} is; pass --assignment")


def identity_problems(folder: Path, assignment: Assignment):
    """What the report says when a folder also looks like other assignments: their notebooks are
    ignored (only `assignment`'s notebook and package are read), whatever they hold."""
    folder, names = Path(folder), _entries(folder)
    problems = []
    for other in _discover().values():
        if other.id == assignment.id:
            continue
        if other.notebook_name in names:
            problems.append(f"{other.notebook_name} is the notebook of another assignment ({other.id}); this "
                            f"submission is graded as {assignment.id} and that notebook was ignored")
        if folder.name == other.id:
            problems.append(f"the folder is named like another assignment ({other.id}); it is graded as "
                            f"{assignment.id}")
    return problems


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

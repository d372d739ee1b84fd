"""Builds every generated tree from the single source of truth.

- student/<assignment>/: nbgrader's release notebook (solutions and hidden tests
  removed) plus hero_transformer/ as of that chapter: the chapter's exercises
  stubbed with `raise NotImplementedError('<id>')`, earlier chapters' code kept.
- solutions/<assignment>/: nbgrader's solution notebook (instructors only).

Sample submissions are not committed: `hero samples OUT` (autograder/samples.py)
renders them from the same package text with the helpers below.

`hero release` runs `build()`; a test rebuilds into a temporary folder and
fails when the committed trees differ.
"""

import ast
import inspect
import json
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
from functools import lru_cache
from pathlib import Path

import nbformat

from . import registry

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
DATA_DIR = "data"  # hero_transformer/data/: files every release carries unchanged
# course/labs/: the labs' notebooks (ungraded).  They are released after the last chapter, as
# student/labs/, with the complete package and its labs/ sub-package (which no chapter's release
# carries): release them once chapter 8 is done.
LABS = "labs"
# modules only the labs use (hero_transformer/cluster.py starts Ray for their grids): released with
# the labs, never with a chapter
LABS_ONLY = ("cluster.py",)
GENERATED_DIRS = (registry.RELEASE_DIR, registry.SOLUTION_DIR)


# --- the package, fence by fence --------------------------------------------------


def _fences(text, module):
    """(exercise, first line index, last line index, indent) for every fenced body in a module."""
    lines = text.splitlines()
    owners = {}
    tree = ast.parse(text)
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for child in node.body:
                if isinstance(child, ast.FunctionDef):
                    owners[(child.lineno, child.end_lineno)] = f"{node.name}.{child.name}"
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            owners[(node.lineno, node.end_lineno)] = node.name
    targets = registry.exercises_by_target()
    found = []
    for index, line in enumerate(lines):
        if line.strip() != BEGIN:
            continue
        end = next(i for i in range(index, len(lines)) if lines[i].strip() == END)
        owner = next((name for (lo, hi), name in owners.items() if lo <= index + 1 <= hi), None)
        if (module, owner) not in targets:
            raise ValueError(f"solution fence at {module}.py line {index + 1} is in {owner!r}, "
                             "which is no registered exercise")
        found.append((targets[module, owner], index, end, line[: len(line) - len(line.lstrip())]))
    return found


def render_package(replace, with_labs=False):
    """hero_transformer/*.py with each fenced body replaced by `replace(exercise, body, indent)` lines;
    with_labs: its labs/ sub-package too (the labs come after the last chapter)."""
    package = registry.REPO_ROOT / registry.PACKAGE
    rendered = {}
    for path in sorted(package.rglob("*.py") if with_labs else package.glob("*.py")):
        if "__pycache__" in path.parts or (not with_labs and path.name in LABS_ONLY):
            continue
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        for exercise, start, end, indent in reversed(_fences(text, path.stem)):
            lines[start : end + 1] = replace(exercise, lines[start + 1 : end], indent)
        rendered[f"{registry.PACKAGE}/{path.relative_to(package).as_posix()}"] = "\n".join(lines) + "\n"
    for path in sorted((package / DATA_DIR).glob("*")):  # the corpus fixture and its licence, as they are
        rendered[f"{registry.PACKAGE}/{DATA_DIR}/{path.name}"] = path.read_text(encoding="utf-8")
    return rendered


def stub_lines(exercise, indent):
    return [
        f"{indent}# 练习 {exercise.id}：{exercise.title_zh}（见本章 notebook）",
        f"{indent}raise NotImplementedError('{exercise.id}')",
    ]


def student_package(chapter):
    """The package as a student starts `chapter`: its exercises (and later ones) stubbed."""
    def replace(exercise, body, indent):
        return stub_lines(exercise, indent) if exercise.chapter >= chapter else body
    return render_package(replace)


def complete_package():
    """The package with every exercise body in place: what the labs run on."""
    return render_package(lambda exercise, body, indent: body, with_labs=True)


def build_labs(output_root):
    """student/labs/: every notebook of course/labs/ without outputs, and the complete package."""
    target = Path(output_root) / registry.RELEASE_DIR / LABS
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    for path in sorted((registry.COURSE_DIR / LABS).glob("*.ipynb")):
        notebook = nbformat.read(str(path), as_version=4)
        for cell in notebook.cells:
            if cell.cell_type == "code":
                cell.outputs, cell.execution_count = [], None
        (target / path.name).write_text(nbformat.writes(notebook) + "\n", encoding="utf-8")
    write_files(target, complete_package())


def indented(lines, indent):
    """Lines at `indent` (blank lines stay empty)."""
    return [indent + line if line else line for line in lines]


def body_lines(source, indent):
    """The body of a function's source text, as fence lines at `indent`."""
    source = textwrap.dedent(source)
    node = ast.parse(source).body[0]
    body = source.splitlines()[node.body[0].lineno - 1 : node.end_lineno]
    return indented(textwrap.dedent("\n".join(body)).splitlines(), indent)


def _exercise_frame(exercise):
    """(the function's lines before its fence, the fence's indent, the reference body dedented,
    the function's lines after the fence), from the module's current text."""
    path = registry.REPO_ROOT / registry.PACKAGE / f"{exercise.module}.py"
    return _frame_in(path.read_text(encoding="utf-8"), exercise.module, exercise.id, exercise.target)


@lru_cache(maxsize=None)
def _frame_in(text, module, exercise_id, target):
    """_exercise_frame's work, parsed once per module text: every mutant of an exercise needs it."""
    lines = text.splitlines()
    _, start, end, indent = next(fence for fence in _fences(text, module) if fence[0].id == exercise_id)
    node = next(node for node in ast.walk(ast.parse(text)) if isinstance(node, ast.FunctionDef)
                and node.lineno <= start + 1 <= node.end_lineno and node.name == target.rpartition(".")[2])
    first = min([node.lineno] + [decorator.lineno for decorator in node.decorator_list]) - 1
    body = tuple(textwrap.dedent("\n".join(lines[start + 1 : end])).splitlines())
    return tuple(lines[first:start]), indent, body, tuple(lines[end + 1 : node.end_lineno])


def reference_body(exercise):
    """The fenced lines of an exercise's reference body, dedented (the fence markers left out)."""
    return list(_exercise_frame(exercise)[2])


def exercise_source(exercise, body):
    """The source of the exercise's function (dedented, its docstring kept), with `body` (dedented
    lines) in place of the fenced reference body: what a fault written as a change, or a mutant, is."""
    before, indent, _, after = _exercise_frame(exercise)
    return textwrap.dedent("\n".join([*before, *indented(body, indent), *after])) + "\n"


def sample_package(chapter, replacement=None):
    """The reference package, with one exercise body replaced (by a catalogue entry's or a mutant's:
    anything with `exercise` and `body(indent)`)."""
    def replace(exercise, body, indent):
        if replacement is not None and replacement.exercise == exercise.id:
            return replacement.body(indent)
        return body if exercise.chapter <= chapter else stub_lines(exercise, indent)
    return render_package(replace)


def write_files(folder, files):
    for relpath, text in files.items():
        path = Path(folder, relpath)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


# --- notebooks, through nbgrader ----------------------------------------------------


def _nbgrader(root, *args):
    """Run nbgrader in a course root holding copies of course/ and nbgrader_config.py."""
    command = [sys.executable, "-m", "nbgrader", *args, "--force", "--log-level=WARN"]
    done = subprocess.run(command, cwd=root, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")


def answered_notebook(release_nb, solution_nb):
    """The release notebook with every answer cell filled from the solution (a full-marks submission)."""
    release = json.loads(Path(release_nb).read_text(encoding="utf-8"))
    solution = json.loads(Path(solution_nb).read_text(encoding="utf-8"))
    answers = {c["metadata"]["nbgrader"]["grade_id"]: c["source"] for c in solution["cells"]
               if c.get("metadata", {}).get("nbgrader", {}).get("solution")}
    for cell in release["cells"]:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if meta.get("solution"):
            source = "".join(answers[meta["grade_id"]]) if isinstance(answers[meta["grade_id"]], list) \
                else answers[meta["grade_id"]]
            source = re.sub(r"^[ \t]*### (BEGIN|END) SOLUTION[ \t]*(\n|\Z)", "", source, flags=re.M).rstrip("\n")
            cell["source"] = source
    return nbformat.writes(nbformat.from_dict(release)) + "\n"


def replace_answers(notebook_path, answers):
    """Set the source of answer cells, {answer id: source}, in a notebook file. An answer cell
    is the code cell before its grade cell, the rule the grader itself reads answers by."""
    notebook = nbformat.read(str(notebook_path), as_version=4)
    previous = None
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if cell.metadata.get("nbgrader", {}).get("grade"):
            if grade_id in answers:
                previous.source = answers[grade_id]
        else:
            previous = cell
    nbformat.write(notebook, str(notebook_path))


def build(output_root=None, show_progress=False, only=None):
    """Rebuild student/ and solutions/ under `output_root` (default: the repo); with `only`
    (assignment ids), rebuild those assignments' folders and leave the others as they are."""
    from .progress import bar

    output_root = Path(output_root or registry.REPO_ROOT)
    labs = not only or LABS in only
    chosen = [registry.ASSIGNMENTS[name] for name in only if name != LABS] if only else list(registry.ASSIGNMENTS.values())
    with tempfile.TemporaryDirectory(prefix="hero-release-") as scratch:
        # nbgrader writes its gradebook and release beside the source; keep that out of the repo
        shutil.copytree(registry.COURSE_DIR, Path(scratch, registry.SOURCE_DIR),
                        ignore=shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints"))
        shutil.copy(registry.REPO_ROOT / "nbgrader_config.py", scratch)
        steps = [(step, assignment.id) for assignment in chosen for step in ("generate_assignment", "generate_solution")]
        with bar(len(steps), "release", unit="step", shown=show_progress) as shown:
            for step, assignment_id in steps:
                _nbgrader(scratch, step, assignment_id)
                shown.update(1)
        for name in GENERATED_DIRS:
            if only:
                for assignment in chosen:
                    shutil.rmtree(output_root / name / assignment.id, ignore_errors=True)
                    shutil.copytree(Path(scratch, name, assignment.id), output_root / name / assignment.id)
            else:
                shutil.rmtree(output_root / name, ignore_errors=True)
                shutil.copytree(Path(scratch, name), output_root / name)
    for assignment in chosen:
        release = output_root / registry.RELEASE_DIR / assignment.id
        if not (release / registry.PACKAGE).is_dir():
            raise RuntimeError(f"the release hook did not write {release / registry.PACKAGE}")
    if labs:
        build_labs(output_root)


def write_release_package(assignment, student, notebooks):
    """nbgrader post_convert_hook of generate_assignment: put the stubbed package in the release.

    nbgrader passes the source notebook paths, <root>/course/<assignment>/<name>.ipynb."""
    root = Path(notebooks[0]).resolve().parents[2]
    if assignment == LABS:  # `nbgrader generate_assignment labs`: the labs run on the complete package
        write_files(root / registry.RELEASE_DIR / assignment, complete_package())
        return
    chapter = registry.ASSIGNMENTS[assignment].chapter
    write_files(root / registry.RELEASE_DIR / assignment, student_package(chapter))

"""The generated trees: fresh, free of solutions and hidden tests, consistent with the registry."""

import filecmp
import json
import re

import pytest

from autograder import registry, release

GENERATED = [registry.REPO_ROOT / name for name in release.GENERATED_DIRS]


def _files(root):
    return sorted(p.relative_to(root) for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts)


@pytest.fixture(scope="module")
def rebuilt(tmp_path_factory):
    out = tmp_path_factory.mktemp("release")
    release.build(out)
    return out


def test_committed_trees_equal_what_hero_release_generates(rebuilt):
    for name in release.GENERATED_DIRS:
        committed, fresh = registry.REPO_ROOT / name, rebuilt / name
        assert _files(committed) == _files(fresh), f"{name}/ has other files than `hero release` makes"
        stale = [str(p) for p in _files(fresh) if not filecmp.cmp(committed / p, fresh / p, shallow=False)]
        assert not stale, f"stale generated files (run `make release`): {stale}"


def _package_modules():
    return sorted(path.stem for path in (registry.REPO_ROOT / registry.PACKAGE).glob("*.py")
                  if path.stem != "__init__" and path.name not in release.LABS_ONLY)  # what a chapter carries


def _solution_bodies():
    """Each fenced reference body of every package module, as its significant lines."""
    bodies = {}
    for module in _package_modules():
        text = (registry.REPO_ROOT / registry.PACKAGE / f"{module}.py").read_text(encoding="utf-8")
        lines = text.splitlines()
        # block openers (`with torch.no_grad():`) say nothing of the answer and recur in any code
        bodies.update({exercise.id: [line.strip() for line in lines[start + 1:end]
                                     if len(line.strip()) > 12 and not line.strip().endswith(":")]
                       for exercise, start, end, _ in release._fences(text, module)})
    return bodies


def test_no_solution_body_and_no_hidden_test_under_student():
    bodies = _solution_bodies()
    student = registry.REPO_ROOT / registry.RELEASE_DIR
    for path in _files(student):
        if path.suffix not in (".py", ".ipynb"):
            continue
        text = (student / path).read_text(encoding="utf-8")
        for marker in ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "hidden_check"):
            assert marker not in text, f"{marker} in {path}"
        if path.parts[0] == release.LABS:
            continue  # released after the last chapter, with the complete package by design
        for exercise, body in bodies.items():
            if path.suffix == ".py" and path.stem != registry.exercise(exercise).module:
                continue  # a module holds its own bodies; generic lines (torch.no_grad()...) recur elsewhere
            if registry.ASSIGNMENTS[path.parts[0]].chapter <= registry.exercise(exercise).chapter:
                for line in body:
                    assert line not in text, f"solution line of {exercise} in {path}: {line}"


def test_notebook_answers_are_not_in_the_release():
    for assignment in registry.ASSIGNMENTS.values():
        source = json.loads(assignment.source_notebook.read_text(encoding="utf-8"))
        released = (registry.REPO_ROOT / registry.RELEASE_DIR / assignment.id / assignment.notebook_name).read_text(
            encoding="utf-8")
        texts = ["".join(cell["source"]) for cell in source["cells"]]
        solutions = [m.group(1) for t in texts for m in re.finditer(r"### BEGIN SOLUTION\n(.*?)### END SOLUTION", t, re.S)]
        # lines that also stand outside any solution (given code such as `x = [2.0, 2.0]`) prove nothing
        given = set(re.sub(r"### BEGIN SOLUTION\n.*?### END SOLUTION", "", "\n".join(texts), flags=re.S).splitlines())
        for solution in solutions:
            for line in solution.splitlines():
                if len(line.strip()) > 12 and line not in given:
                    assert json.dumps(line.strip())[1:-1] not in released, line


def test_every_value_the_text_asks_the_student_to_change_lies_in_an_editable_cell():
    """nbgrader locks given cells (editable: false in the release): a setting the notebook asks the
    student to change (`把 `X` 改成 ...`, or a code comment saying to change it) lives in an
    unlocked cell, and no locked cell tells the student to edit it."""
    asked = re.compile(r"把\s*`([A-Z_][A-Z0-9_]*)`[^。\n]{0,20}?(?:改成|换成)|`([A-Z_][A-Z0-9_]*)`\s*(?:取|换成)")
    for assignment in registry.ASSIGNMENTS.values():
        released = json.loads((registry.REPO_ROOT / registry.RELEASE_DIR / assignment.id / assignment.notebook_name)
                              .read_text(encoding="utf-8"))
        editable, names = [], set()
        for cell in released["cells"]:
            text = "".join(cell["source"])
            if cell["cell_type"] == "markdown":
                names |= {a or b for a, b in asked.findall(text)}
            elif cell["metadata"].get("editable", True):
                editable.append(text)
            else:
                comments = [line for line in text.splitlines() if "#" in line]
                assert not any(re.search(r"#.*(改成|改这|换成|没有锁定)", line) for line in comments), \
                    (assignment.id, text[:200])
        for name in names:
            assert any(re.search(rf"^{name}\b[^=\n]*=", text, re.M) or re.search(rf"^[A-Z_, ]*\b{name}\b[A-Z_, ]*=",
                                                                                  text, re.M) for text in editable), \
                f"{assignment.id}: the text asks to change {name}, which no editable cell sets"


# Run inside a release folder: its hero_transformer/ (the current directory comes first on
# sys.path) against the course's own probes.  Prints the package's public names and signatures,
# then one line per exercise: whether the release's body passes its hidden checks.
WALK = r"""
import importlib, inspect, json, os, sys
from autograder import inline, registry
api = {}
for name in sys.argv[1:]:
    module = importlib.import_module("hero_transformer." + name)
    assert module.__file__.startswith(os.getcwd()), module.__file__
    for attribute, value in vars(module).items():
        if attribute.startswith("_") or getattr(value, "__module__", None) != module.__name__:
            continue
        members = {m: str(inspect.signature(f)) for m, f in vars(value).items()
                   if inspect.isfunction(f) and not m.startswith("__")} if inspect.isclass(value) else {}
        api[name + "." + attribute] = [str(inspect.signature(value)) if callable(value) else repr(value), members]
print(json.dumps(api, sort_keys=True))
for exercise in registry.all_exercises():
    try:
        inline.hidden_check(exercise.id)
        print("VERDICT", exercise.id, "passed")
    except AssertionError as error:
        print("VERDICT", exercise.id, "stub" if "NotImplementedError('" + exercise.id + "')" in str(error) else "failed")
"""


@pytest.mark.parametrize("assignment", sorted(registry.ASSIGNMENTS.values(), key=lambda a: a.chapter),
                         ids=lambda a: a.id)
def test_walking_the_releases_in_order_each_package_imports_and_keeps_every_convention(assignment, tmp_path):
    """A student going from chapter to chapter imports each release's package: the same public
    names and signatures as the reference (no name, shape or convention changes between
    chapters), every earlier chapter's exercise working, this chapter's and later ones stubbed."""
    import subprocess
    import sys

    released = registry.REPO_ROOT / registry.RELEASE_DIR / assignment.id
    modules = _package_modules()
    done = subprocess.run([sys.executable, "-c", WALK, *modules], cwd=released, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    reference = subprocess.run([sys.executable, "-c", WALK.split("for exercise in")[0], *modules],
                               cwd=registry.REPO_ROOT, capture_output=True, text=True)
    api = done.stdout.splitlines()[0]
    assert json.loads(api) == json.loads(reference.stdout)
    verdicts = [line.split()[1:] for line in done.stdout.splitlines() if line.startswith("VERDICT ")]
    for exercise_id, verdict in verdicts:
        chapter = registry.exercise(exercise_id).chapter
        assert verdict == ("passed" if chapter < assignment.chapter else "stub"), (exercise_id, verdict)
    assert len(verdicts) == len(registry.all_exercises())


def test_every_grade_cell_has_a_check_and_every_check_a_grade_cell():
    for assignment in registry.ASSIGNMENTS.values():
        registered = {e.id for e in assignment.exercises} | {a.id for a in assignment.answers}
        assert set(assignment.points()) == registered


def test_every_fence_is_a_registered_exercise_and_every_exercise_is_fenced():
    fenced = []
    for module in _package_modules():
        text = (registry.REPO_ROOT / registry.PACKAGE / f"{module}.py").read_text(encoding="utf-8")
        fenced += [(module, exercise.id) for exercise, *_ in release._fences(text, module)]
    assert sorted(fenced) == sorted((e.module, e.id) for e in registry.all_exercises())


def test_hero_samples_writes_every_sample_of_every_assignment(tmp_path):
    """`hero samples OUT`: OUT/<assignment>/ holds the reference, the stubs and one folder per
    catalogue entry and hostile attempt; none of them is committed."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "autograder.cli", "samples", str(tmp_path)], capture_output=True,
                          text=True, cwd=registry.REPO_ROOT)
    assert done.returncode == 0, done.stderr
    for assignment in registry.ASSIGNMENTS.values():
        folder = tmp_path / assignment.id
        expected = {"reference", "stubs"} | {e.sample for e in assignment.entries()} \
            | {"hostile_" + a.id for a in assignment.hostile()}
        assert {p.name for p in folder.iterdir()} == expected
        answered = (folder / "reference" / assignment.notebook_name).read_text(encoding="utf-8")
        assert "SOLUTION" not in answered, "a fence line is left in the answered notebook"
        assert f"{assignment.id}: {len(expected)} samples" in done.stdout
    tracked = subprocess.run(["git", "ls-files", "autograder/samples"], capture_output=True, text=True,
                             cwd=registry.REPO_ROOT).stdout
    assert tracked == "", "sample submissions are generated, not committed"

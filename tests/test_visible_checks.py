"""The notebooks' visible checks (hero_transformer/checks.py and every *_checks.py), as a student
meets them: each chapter's reference passes them; each check exercises its own exercise alone (the
chapter's other exercises may all be stubs: it runs on test doubles); a wrong body fails with the
check's words and the one line of the student's code it points to, never the checks' own frames
(the whole traceback one switch away); and in IPython or Jupyter an answer's form check says in one
line that it passed.

The packages are rendered from the repository's hero_transformer/ (autograder.release) into a
temporary folder, and each chapter's checks run in one subprocess that imports them in turn."""

import ast
import atexit
import functools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from autograder import reference, registry, release

from conftest import TESTED

CHECK_MODULES = sorted(path.stem for path in (registry.REPO_ROOT / registry.PACKAGE).glob("*checks.py"))


def _visible_checks():
    """{exercise id: (checks module, function name, the decorator's module, its target)}."""
    found = {}
    for name in CHECK_MODULES:
        module = reference.load(name)
        for attribute, value in vars(module).items():
            if attribute.startswith("check_") and hasattr(value, "exercise"):
                assert value.exercise not in found, f"{value.exercise} has two visible checks"
                found[value.exercise] = (name, attribute, value.module, value.target)
    return found


VISIBLE = _visible_checks()

# a few wrong bodies per chapter, each caught by its visible check: a wrong result (the check points
# at the exercise's `def`) or an error raised inside the student's code (it points at that line)
WRONG = {
    "ch01_tokens": {"denominator_with_one_alpha": "result", "unknown_raises_key_error": "raised"},
    "ch02_embeddings": {"one_based_columns": "result", "column_read": "raised"},
    "ch03_positions": {"start_ignored": "result", "rows_per_sequence": "result"},
    "ch04_attention": {"no_output_projection": "result", "keys_as_rows": "result"},
    "ch05_block": {"post_ln": "result", "ln2_reads_x": "result", "activation_bypassed": "result",
                   "storage_not_transposed": "raised"},
    "ch06_backward": {"ln_eps_not_passed": "result", "grad_x_transposed": "raised"},
    "ch07_model": {"loss_summed": "result", "head_before_ln_f": "raised"},
    "ch08_train_generate": {"own_softmax": "result", "wrong_exception": "raised"},
}

# imports each job's package afresh and runs its checks, recording what each printed and raised
HARNESS = textwrap.dedent("""
    import contextlib, importlib, io, json, sys, traceback
    results = []
    for job in json.load(open(sys.argv[1])):
        for name in [m for m in sys.modules if m.split(".")[0] == "hero_transformer"]:
            del sys.modules[name]
        sys.path.insert(0, job["root"])
        for module, function in job["checks"]:
            out, err, record = io.StringIO(), io.StringIO(), {"label": job["label"], "check": function}
            try:
                with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                    getattr(importlib.import_module("hero_transformer." + module), function)()
                record["raised"] = None
            except Exception as exc:
                record["raised"], record["message"] = type(exc).__name__, str(exc)
                record["files"] = [frame.filename for frame in traceback.extract_tb(exc.__traceback__)]
            record["stdout"], record["stderr"] = out.getvalue(), err.getvalue()
            results.append(record)
        sys.path.remove(job["root"])
    json.dump(results, sys.stdout)
""")


@functools.cache
def _root():
    root = Path(tempfile.mkdtemp(prefix="hero-visible-checks-"))
    atexit.register(shutil.rmtree, root, True)
    return root


def _package(label, files):
    folder = _root() / label
    release.write_files(folder, files)
    return folder


def _only(assignment, exercise):
    """The package with `exercise` done and the chapter's other exercises (and later ones) stubs."""
    def replace(other, body, indent):
        keep = other.chapter < assignment.chapter or other.id == exercise.id
        return body if keep else release.stub_lines(other, indent)
    return release.render_package(replace)


@functools.cache
def outcomes(assignment_id):
    """{(package label, check function): what it did}, for the chapter's packages: the reference, the
    release (every exercise a stub), one per exercise with only that exercise done, and the WRONG bodies."""
    assignment = registry.ASSIGNMENTS[assignment_id]
    checks = [VISIBLE[exercise.id][:2] for exercise in assignment.exercises]
    jobs = [{"label": "reference", "root": str(_package(f"{assignment_id}-reference",
                                                            release.sample_package(assignment.chapter))),
             "checks": checks},
            {"label": "stubs", "root": str(_package(f"{assignment_id}-stubs",
                                                        release.student_package(assignment.chapter))),
             "checks": checks}]
    for exercise in assignment.exercises:
        root = _package(f"{assignment_id}-only-{exercise.id}", _only(assignment, exercise))
        jobs.append({"label": f"only {exercise.id}", "root": str(root), "checks": [VISIBLE[exercise.id][:2]]})
    for entry in assignment.entries("correct"):  # every body the hidden tests accept
        root = _package(f"{assignment_id}-correct-{entry.id}", release.sample_package(assignment.chapter, entry))
        jobs.append({"label": f"correct {entry.id}", "root": str(root), "checks": [VISIBLE[entry.exercise][:2]]})
    for entry in assignment.entries("fault"):
        if entry.id in WRONG.get(assignment_id, {}):
            root = _package(f"{assignment_id}-{entry.id}", release.sample_package(assignment.chapter, entry))
            jobs.append({"label": entry.id, "root": str(root), "checks": [VISIBLE[entry.exercise][:2]]})
    spec = _root() / f"{assignment_id}-jobs.json"
    spec.write_text(json.dumps(jobs), encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", HARNESS, str(spec)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    roots = {job["label"]: Path(job["root"]) for job in jobs}
    return {(r["label"], r["check"]): {**r, "root": roots[r["label"]]} for r in json.loads(done.stdout)}


def _result(assignment, label, exercise_id):
    return outcomes(assignment.id)[label, VISIBLE[exercise_id][1]]


def test_every_exercise_has_one_visible_check_that_names_its_function():
    """The student package cannot read the registry: each check's decorator repeats the exercise's
    module and target, and this keeps the two in step."""
    exercises = {e.id: e for a in registry.ASSIGNMENTS.values() for e in a.exercises}
    assert sorted(VISIBLE) == sorted(exercises)
    for exercise_id, (_, _, module, target) in VISIBLE.items():
        assert (module, target) == (exercises[exercise_id].module, exercises[exercise_id].target), exercise_id


@pytest.mark.parametrize("assignment", TESTED, ids=lambda a: a.id)
def test_the_reference_passes_every_visible_check(assignment):
    for exercise in assignment.exercises:
        result = _result(assignment, "reference", exercise.id)
        assert result["raised"] is None, (exercise.id, result.get("message"))
        assert result["stdout"].startswith("✓ 可见检查通过") and not result["stderr"], exercise.id


@pytest.mark.parametrize("assignment", TESTED, ids=lambda a: a.id)
def test_each_check_runs_with_the_chapters_other_exercises_still_stubs(assignment):
    """Only its own exercise done: the check passes (what else it needs is a double).  And the
    other way: with its own exercise a stub it says so in one line, naming that exercise alone."""
    for exercise in assignment.exercises:
        alone = _result(assignment, f"only {exercise.id}", exercise.id)
        assert alone["raised"] is None and "尚未实现" not in alone["stderr"], (exercise.id, alone)
        assert alone["stdout"].startswith("✓ 可见检查通过"), exercise.id
        stub = _result(assignment, "stubs", exercise.id)
        assert stub["raised"] is None and not stub["stdout"], (exercise.id, stub)
        assert stub["stderr"].startswith(f"· 尚未实现：练习 {exercise.id} 还是 raise NotImplementedError"), stub
        assert "这个检查要用到它" not in stub["stderr"] and len(stub["stderr"].splitlines()) == 2


@pytest.mark.parametrize("assignment", TESTED, ids=lambda a: a.id)
def test_no_visible_check_rejects_a_body_the_hidden_tests_accept(assignment):
    """The hidden tests are never weaker than the visible checks: every correct variant of the catalogue
    (each earns full marks from the hidden tests, tests/test_catalogues.py) passes its exercise's visible
    check too.  The faults need no such test: the hidden tests reject every one of them."""
    rejected = {}
    for entry in assignment.entries("correct"):
        result = _result(assignment, f"correct {entry.id}", entry.exercise)
        if result["raised"] is not None or not result["stdout"].startswith("✓ 可见检查通过"):
            rejected[entry.id] = result.get("message") or result["stderr"][-500:]
    assert not rejected, rejected


def _pointer(message):
    """(relpath, line, source) of the one '→ file:line  source' line of a failure's message."""
    pointers = [line for line in message.splitlines() if line.lstrip().startswith("→")]
    assert len(pointers) == 1, message
    found = re.fullmatch(r"\s*→ (\S+):(\d+)  (.*)", pointers[0])
    assert found, pointers[0]
    return found.group(1), int(found.group(2)), found.group(3)


@pytest.mark.parametrize("assignment", TESTED, ids=lambda a: a.id)
def test_a_wrong_body_fails_in_a_few_lines_that_name_the_students_line(assignment):
    wrong = WRONG[assignment.id]
    entries = {entry.id: entry for entry in assignment.entries("fault") if entry.id in wrong}
    assert sorted(entries) == sorted(wrong)
    for fault_id, kind in wrong.items():
        exercise = assignment.item(entries[fault_id].exercise)
        result = _result(assignment, fault_id, exercise.id)
        message = result.get("message", "")
        assert result["raised"] == "AssertionError" and "✓" not in result["stdout"], (fault_id, result)
        lines = message.splitlines()
        assert lines[0].startswith("✗ 可见检查未通过：") and lines[1].startswith("  ("), message
        assert len(lines) == 4 and "show_tracebacks()" in lines[3] and "HERO_TRACEBACK=1" in lines[3]
        assert "Traceback" not in message and "checks.py" not in message and "File \"" not in message
        relpath, number, source = _pointer(message)
        assert relpath == f"{registry.PACKAGE}/{exercise.module}.py", message
        text = (result["root"] / relpath).read_text(encoding="utf-8")
        assert text.splitlines()[number - 1].strip() == source, message
        first, last = _lines_of(text, exercise.target)
        if kind == "result":
            assert number == first, (fault_id, message)  # the exercise's own `def`
        else:
            assert lines[0].startswith("✗ 可见检查未通过：你的代码抛出了 "), message
            assert first < number <= last, (fault_id, message)  # inside the exercise, not the code it calls


def _lines_of(text, target):
    """(the `def` line, the last line) of `target` ("Class.method" or "function") in a module's text."""
    body = ast.parse(text).body
    for name in target.split("."):
        node = next(n for n in body if isinstance(n, (ast.ClassDef, ast.FunctionDef)) and n.name == name)
        body = node.body
    return node.lineno, node.end_lineno


def _run(code, folder, **env):
    return subprocess.run([sys.executable, "-c", code], cwd=folder, capture_output=True, text=True,
                          env={**os.environ, **env})


@pytest.fixture(scope="module")
def post_ln():
    """Chapter 5's package with the post-LN block (a wrong result), or a skip when ch05 is not tested."""
    if "ch05_block" not in {a.id for a in TESTED}:
        pytest.skip("HERO_TEST_ASSIGNMENTS leaves ch05_block out")
    assignment = registry.ASSIGNMENTS["ch05_block"]
    entry = next(e for e in assignment.entries("fault") if e.id == "post_ln")
    return _package("ch05-post-ln", release.sample_package(assignment.chapter, entry))


def test_the_whole_traceback_is_one_switch_away(post_ln):
    short = _run("from hero_transformer import checks\nchecks.check_block()\n", post_ln)
    assert short.returncode == 1 and "AssertionError: ✗ 可见检查未通过" in short.stderr
    assert "checks.py\", line" in short.stderr and "in check_block" not in short.stderr  # the wrapper's frame only
    for whole in (_run("from hero_transformer import checks\nchecks.show_tracebacks()\nchecks.check_block()\n", post_ln),
                  _run("from hero_transformer import checks\nchecks.check_block()\n", post_ln, HERO_TRACEBACK="1")):
        assert whole.returncode == 1 and "in check_block" in whole.stderr and "in _raise_if" in whole.stderr
        assert "可见检查未通过" not in whole.stderr and "post-LN" in whole.stderr  # the judge's own AssertionError


# drives IPython's own shell, as Jupyter's kernel does, and reports each cell's output and outcome
IPYTHON = textwrap.dedent("""
    import contextlib, io, json, os, sys
    sys.path.insert(0, os.getcwd())
    from IPython.core.interactiveshell import InteractiveShell
    shell = InteractiveShell.instance()
    report = []
    for source in json.loads(sys.argv[1]):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            result = shell.run_cell(source)
        error = result.error_in_exec
        report.append({"out": out.getvalue(), "error": type(error).__name__ if error else None,
                       "assertion": isinstance(error, AssertionError)})
    print(json.dumps(report))
""")


def _ipython(folder, cells):
    done = subprocess.run([sys.executable, "-c", IPYTHON, json.dumps(cells)], cwd=folder, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


def test_in_ipython_a_failing_check_shows_its_message_alone_and_the_cell_fails(post_ln):
    setup, failing, whole = _ipython(post_ln, ["from hero_transformer import checks", "checks.check_block()",
                                               "checks.show_tracebacks()\nchecks.check_block()"])
    assert setup["error"] is None
    assert failing["error"] == "CheckFailed" and failing["assertion"]  # the cell fails, as an AssertionError
    assert failing["out"].startswith("✗ 可见检查未通过：") and "Traceback" not in failing["out"]
    assert "checks.py" not in failing["out"] and "hero_transformer/model.py:" in failing["out"]
    assert len(failing["out"].strip().splitlines()) == 4
    assert whole["error"] == "AssertionError" and "Traceback" in whole["out"] and "checks.py" in whole["out"]


def test_in_ipython_an_answers_form_check_says_in_one_line_that_it_passed(post_ln):
    cells = ["from hero_transformer import checks\nx = 0.25",
             "if checks.answered('x', x):\n    assert isinstance(x, float)",  # passes
             "print('the next cell')",
             "if checks.answered('x', x):\n    assert x > 1",  # fails: no pass line
             "y = ...\nif checks.answered('y', y):\n    assert y",  # not answered yet: no pass line either
             "print('and the next')"]
    report = _ipython(post_ln, cells)
    assert report[1] == {"out": "✓ x：形式正确（数值由隐藏测试核对）  (x: the form is right; the hidden tests check "
                                "the value)\n", "error": None, "assertion": False}
    assert report[2]["out"] == "the next cell\n"  # said once, in its own cell
    assert report[3]["error"] == "AssertionError" and "✓" not in report[3]["out"]
    assert "✓" not in report[4]["out"] and report[5]["out"] == "and the next\n"
    # outside IPython nothing is added: a script (or a test) sees True and no output
    plain = _run("from hero_transformer import checks\nassert checks.answered('x', 0.25)\n", post_ln)
    assert plain.returncode == 0 and plain.stdout == "" and plain.stderr == ""


def test_in_a_jupyter_kernel_the_failure_is_an_error_output_and_the_pass_line_sits_in_its_cell(post_ln):
    """What nbgrader's Validate reads: the failing check's cell holds an error output (no credit), its
    traceback the short message; the answer's pass line is that cell's own stdout (full credit)."""
    import nbformat
    from nbclient import NotebookClient
    from nbgrader.utils import determine_grade

    notebook = nbformat.v4.new_notebook()
    sources = ["from hero_transformer import checks\nx = 0.25", "checks.check_block()",
               "if checks.answered('x', x):\n    assert isinstance(x, float)", "print('next')"]
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in sources]
    for cell in notebook.cells[1:3]:
        cell.metadata["nbgrader"] = {"grade": True, "solution": False, "points": 1, "grade_id": cell.source[:8]}
    NotebookClient(notebook, timeout=120, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(post_ln)}}).execute()
    check, answer, after = notebook.cells[1:]
    [error] = check.outputs
    assert error.output_type == "error" and error.ename == "CheckFailed"
    assert error.traceback[0].startswith("✗ 可见检查未通过：") and len(error.traceback) == 4
    assert not any("Traceback" in line or "checks.py" in line for line in error.traceback)
    assert determine_grade(check) == (0, 1)
    assert [(o.output_type, o.get("name"), o.get("text")) for o in answer.outputs] == [
        ("stream", "stdout", "✓ x：形式正确（数值由隐藏测试核对）  (x: the form is right; the hidden tests check the value)\n")]
    assert determine_grade(answer) == (1, 1)
    assert [o.get("text") for o in after.outputs] == ["next\n"]


def test_after_autoreload_the_students_line_is_still_the_files(post_ln, tmp_path):
    """IPython 9's autoreload recompiles a changed method from its unparsed text (comments dropped),
    whose code counts its lines from 1: the check still names the line of the file that raised."""
    folder = tmp_path / "student"
    shutil.copytree(post_ln, folder)
    model = folder / registry.PACKAGE / "model.py"
    lines = model.read_text(encoding="utf-8").splitlines()
    first, last = _lines_of("\n".join(lines), "TransformerBlock.forward")
    bodies = {"return hidden @ ones, None": ["# a comment autoreload drops", "ones = torch.ones(3, 3)",
                                             "return hidden @ ones, None"],
              "return hidden.reshape(shape), None": ["if hidden.dim() == 3:", "    pass", "shape = (5, 7)", "",
                                                     "return hidden.reshape(shape), None"]}
    cells, texts = ["%load_ext autoreload\n%autoreload 2\nfrom hero_transformer import checks, model"], []
    for body in bodies.values():  # the def line and its docstring kept, the body replaced
        texts.append("\n".join(lines[:first + 1] + [" " * 8 + line if line else "" for line in body] + lines[last:]))
        cells += [f"import pathlib\npathlib.Path({str(model)!r}).write_text({texts[-1]!r}, encoding='utf-8')",
                  "checks.check_block()", "print(model.TransformerBlock.forward.__code__.co_firstlineno)"]
    report = _ipython(folder, cells)
    recompiled = False
    for step, (raising, text) in enumerate(zip(bodies, texts)):
        check, firstlineno = report[2 + 3 * step], int(report[3 + 3 * step]["out"])
        assert check["error"] == "CheckFailed" and "你的代码抛出了 RuntimeError" in check["out"], check
        _, number, source = _pointer(check["out"])
        assert source == raising and text.splitlines()[number - 1].strip() == raising, check["out"]
        recompiled |= firstlineno != first
    assert recompiled  # autoreload did recompile a method from its text: the case this test is about


# the test doubles the checks stand in for other exercises with: in the student's package, where
# a submission could call them, so none may be a solution of any exercise
DOUBLES = {"checks": ("prefix_mean_attention", "zero_attention"),
           "attention_checks": ("distance_scores", "cooled_softmax", "strided_split", "strided_merge"),
           "backward_checks": ("affine_backward", "tanh_backward", "sine_linear_backward",
                               "subtracting_residual_backward"),
           "train_checks": ("least_likely", "reversed_softmax")}


@pytest.mark.parametrize("assignment", TESTED, ids=lambda a: a.id)
def test_no_double_of_the_visible_checks_is_a_solution(assignment):
    from autograder import engine

    doubles = [(f"{module}.{name}", getattr(reference.load(module), name))
               for module, names in DOUBLES.items() for name in names]
    for exercise in assignment.exercises:
        module = engine.reference_module(exercise.id)
        owner_name, _, attribute = exercise.target.rpartition(".")
        owner = getattr(module, owner_name) if owner_name else module
        saved = owner.__dict__[attribute]
        expected = engine.reference_outputs(exercise.id)
        for name, double in doubles:
            bodies = [double] + ([lambda self, *args, double=double, **kwargs: double(*args, **kwargs)]
                                 if owner_name else [])
            for body in bodies:
                setattr(owner, attribute, body)
                try:
                    got = {case: engine._run(module, exercise.id, case) for case in expected}
                finally:
                    setattr(owner, attribute, saved)
                assert any(engine.mismatch(got[case], expected[case]) for case in expected), \
                    f"{name} is a correct body of {exercise.id}"

"""Bad input costs only what it breaks, with a clear message; the rest is still graded."""

import json
import shutil

import pytest

from conftest import CHAPTER, MODEL, SUMMARY, apply_edits, needs_bubblewrap, scores

REFERENCE_GELU = "    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))\n"
REFERENCE_LEDGER = "    per_block = 4 * d * d + 2 * d * f + f + d + 4 * d\n"
NOTEBOOK = "ch05_block.ipynb"
EXERCISES = {e.id for e in CHAPTER.exercises}
ANSWERS = {a.id for a in CHAPTER.answers}


def gelu_body(body):
    return {MODEL: [(REFERENCE_GELU, body)]}


def break_notebook(text):
    def edit(folder):
        (folder / NOTEBOOK).write_text(text, encoding="utf-8")
    return edit


def remove(relpath):
    def edit(folder):
        target = folder / relpath
        shutil.rmtree(target) if target.is_dir() else target.unlink()
    return edit


def kernel(name, language):
    def edit(folder):
        data = json.loads((folder / NOTEBOOK).read_text(encoding="utf-8"))
        data["metadata"]["kernelspec"] = {"name": name, "language": language, "display_name": name}
        (folder / NOTEBOOK).write_text(json.dumps(data), encoding="utf-8")
    return edit


def non_utf8(folder):
    path = folder / MODEL
    path.write_bytes(path.read_bytes() + b"\n# caf\xe9 \xff\n")


def truncated(folder):
    path = folder / NOTEBOOK
    path.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])


# id: (edits or an edit function, the items it may cost, where the message shows, the message)
BAD_INPUTS = {
    "syntax_error": (gelu_body("    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0))\n"), {"gelu"},
                     "gelu", "SyntaxError"),
    "wrong_signature": ({MODEL: [("        return self.dropout(self.fc2(self.activation(self.fc1(x))))\n",
                                  "        return self.dropout(self.fc2(self.activation(self.fc1(x))))\n\n"
                                  "    def forward(self):  # a later definition replaces the right one\n"
                                  "        return None\n")]}, {"feedforward"}, "feedforward", "TypeError"),
    "wrong_type": (gelu_body("    return x.tolist()\n"), {"gelu"}, "gelu", "expected a tensor, got a list"),
    "wrong_shape": (gelu_body("    return (0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0))))[..., :1]\n"), {"gelu"},
                    "gelu", "inputs x: shape [121]): the output's shape [1] differs from the reference's"),
    "wrong_dtype": (gelu_body("    x = x.double()\n" + REFERENCE_GELU), {"gelu"}, "gelu",
                    "the output's dtype torch.float64 differs from the reference's."),
    "nan_output": (gelu_body("    return x * float('nan')\n"), {"gelu"}, "gelu", "NaN"),
    "inf_output": (gelu_body("    return x / 0.0\n"), {"gelu"}, "gelu", "inf"),
    "enormous_output": (gelu_body("    return torch.zeros(2_000_000)\n"), {"gelu"}, "gelu", "output too large"),
    "exception": ({MODEL: [(REFERENCE_LEDGER, "    raise ValueError('ledger broke')\n")]}, {"parameter_count"},
                  "parameter_count", "ValueError: ledger broke"),
    "missing_package": (remove("hero_transformer"), EXERCISES, "problems", "hero_transformer/ is missing"),
    "missing_model_file": (remove(MODEL), EXERCISES, "layer_norm", "No module named 'hero_transformer.model'"),
    "missing_notebook": (remove(NOTEBOOK), ANSWERS, "problems", "ch05_block.ipynb is missing"),
    "malformed_notebook": (break_notebook('{"cells": ['), ANSWERS, "residual_output",
                           "could not be read as a notebook"),
    "truncated_notebook": (truncated, ANSWERS, "residual_output", "could not be read as a notebook"),
    "not_a_notebook": (break_notebook('{"nbformat": 3, "worksheets": []}'), ANSWERS, "problems",
                       "not an nbformat 4 notebook"),
    "wrong_kernel": (kernel("julia-1.9", "julia"), set(), "problems", "names the kernel 'julia-1.9'"),
    "non_utf8_file": (non_utf8, set(), "problems", "is not UTF-8"),
}


def lost(report):
    return {item.id for item in report.items if item.score < item.max_score}


@pytest.fixture(scope="module")
def bad_reports(tmp_path_factory, pool):
    from autograder import engine

    from conftest import SAMPLES

    root = tmp_path_factory.mktemp("bad")
    folders = []
    for name, (edit, *_) in BAD_INPUTS.items():
        folder = root / name
        shutil.copytree(SAMPLES / "reference", folder)
        edit(folder) if callable(edit) else apply_edits(folder, edit)
        folders.append(folder)
    return dict(zip(BAD_INPUTS, engine.grade_many(folders, "ch05_block", pool=pool)))


@pytest.mark.parametrize("name", BAD_INPUTS)
def test_bad_input_costs_only_what_it_breaks_and_says_why(bad_reports, name):
    _, may_cost, where, message = BAD_INPUTS[name]
    report = bad_reports[name]
    assert lost(report) <= may_cost, f"{name} cost more than it breaks: {sorted(lost(report) - may_cost)}"
    text = " ".join(report.problems) if where == "problems" else report.item(where).feedback_en
    assert message in text, text


def test_bad_input_catalogue_summary(bad_reports):
    handled = [name for name, (_, may_cost, where, message) in BAD_INPUTS.items()
               if lost(bad_reports[name]) <= may_cost
               and message in (" ".join(bad_reports[name].problems) if where == "problems"
                               else bad_reports[name].item(where).feedback_en)]
    SUMMARY["bad input"] = f"bad input {len(handled)}/{len(BAD_INPUTS)} handled"
    assert len(handled) == len(BAD_INPUTS)


def test_a_hang_costs_only_that_exercise(submission, grade):
    folder = submission(edits=gelu_body("    while True:\n        pass\n"))
    report = grade(folder, timeout=2)
    assert lost(report) == {"gelu"}
    assert report.item("gelu").status == "timeout"
    assert "time limit" in report.item("gelu").feedback_en


def test_a_crash_costs_only_that_exercise(submission, grade, source_unread):
    folder = submission(edits={MODEL: [(REFERENCE_LEDGER, "    import ctypes\n    ctypes.string_at(0)\n")]})
    report = grade(folder)
    assert lost(report) == {"parameter_count"}
    assert report.item("parameter_count").status == "error"


def test_stderr_output_and_warnings_never_cost_a_correct_answer(submission, grade):
    noisy = ("    import sys, warnings\n    print('debug', file=sys.stderr)\n"
             "    warnings.warn('just a warning')\n" + REFERENCE_GELU)
    folder = submission(edits=gelu_body(noisy),
                        answers={"increment_gap": "import sys\nprint('noise', file=sys.stderr)\n"
                                                  "z = standardise([1.0, 1.004])\n"
                                                  "increment_gap = 0.5 * gelu_exact(z[1]) - 0.5 * gelu_exact(z[0])"})
    report = grade(folder)
    assert report.score == report.max_score
    assert "debug" in report.item("gelu").output


def test_import_time_loop_costs_the_package_exercises_not_the_answers(submission, grade):
    folder = submission(edits={MODEL: [('"""A small decoder-only', 'while True:\n    pass\n"""A small decoder-only')]})
    report = grade(folder, timeout=2)
    assert lost(report) == EXERCISES
    assert all(report.item(answer).score == report.item(answer).max_score for answer in ANSWERS)


def test_scores_are_identical_across_isolation_modes(submission, grade, monkeypatch):
    from autograder import engine
    from autograder.sandbox import WorkerPool

    folder = submission("post_ln")
    monkeypatch.setenv("HERO_SANDBOX", "process")
    plain = WorkerPool(size=1)
    try:
        report = engine.grade(folder, "ch05_block", pool=plain)
    finally:
        plain.close()
    assert report.isolation == "process"
    assert scores(report) == scores(grade(folder))


@needs_bubblewrap
def test_a_task_starts_no_process_or_thread_and_cannot_reach_the_worker(submission, grade, source_unread):
    """A task is one single-threaded process: fork, threads and programs are refused by the
    kernel (confine.forbid_new_processes), so nothing of it outlives it or escapes its accounting."""
    hostile = (
        "    import os, threading, subprocess\n"
        "    try:\n"
        "        open(f'/proc/{os.getppid()}/mem', 'rb').read(1)\n"
        "        print('worker memory is open')\n"
        "    except OSError:\n"
        "        print('worker memory is closed')\n"
        "    for name, start in (('fork', os.fork), ('thread', lambda: threading.Thread(target=print).start()),\n"
        "                        ('program', lambda: subprocess.run(['true'])), ('exec', lambda: os.execv('/bin/true', ['true']))):\n"
        "        try:\n"
        "            if start() == 0:\n"
        "                os._exit(0)\n"
        "            print(name, 'started')\n"
        "        except (OSError, RuntimeError) as exc:\n"
        "            print(name, 'refused:', type(exc).__name__)\n"
        "    print('tasks alive:', len([p for p in os.listdir('/proc') if p.isdigit()]))\n"
    )
    folder = submission(edits=gelu_body(hostile + REFERENCE_GELU))
    first, second = grade(folder), grade(folder)
    assert first.item("gelu").status == "passed"
    output = first.item("gelu").output
    assert "worker memory is closed" in output and "worker memory is open" not in output
    for name in ("fork", "thread", "program", "exec"):
        assert f"{name} refused" in output, output
    assert "started" not in output
    # the worker and this task only, every time
    alive = [[line for line in report.item("gelu").output.splitlines() if line.startswith("tasks alive")][0]
             for report in (first, second)]
    assert alive[0] == alive[1] == "tasks alive: 2", alive


def test_root_without_bubblewrap_is_refused_unless_asked_for(monkeypatch):
    """auto never falls back to running student code as root; HERO_SANDBOX=process says to accept that."""
    from autograder import sandbox

    monkeypatch.setattr(sandbox, "bubblewrap_works", lambda: False)
    monkeypatch.setattr(sandbox.os, "geteuid", lambda: 0)
    monkeypatch.setenv("HERO_SANDBOX", "auto")
    with pytest.raises(sandbox.SandboxUnavailable, match="would run as root"):
        sandbox.choose_isolation()
    monkeypatch.setenv("HERO_SANDBOX", "process")
    assert sandbox.choose_isolation() == "process"


def test_a_worker_that_is_not_confined_refuses_to_serve():
    """The worker's own check of what the kernel says: each missing guarantee is named."""
    from autograder import confine

    confined = {"uid": 65534, "euid": 65534, "gid": 65534, "groups": [], "no_new_privs": True, "seccomp": True,
                "dumpable": 0, "capabilities": dict.fromkeys(("CapInh", "CapPrm", "CapEff", "CapAmb"), "0" * 16)}
    assert confine.problems(confined) == []
    assert confine.problems({**confined, "uid": 0}) == ["runs as uid 0 gid 65534"]
    assert "holds capabilities" in confine.problems({**confined, "capabilities": {**confined["capabilities"],
                                                                                  "CapInh": "00000000000000c0"}})[0]
    assert confine.problems({**confined, "seccomp": False, "no_new_privs": False, "dumpable": 1}) == [
        "no no_new_privs", "no seccomp", "is dumpable"]

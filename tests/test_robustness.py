"""Bad input costs only what it breaks, with a clear message; the rest is still graded."""

from conftest import MODEL, needs_bubblewrap, scores

REFERENCE_GELU = "    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))\n"
REFERENCE_LEDGER = "    per_block = 4 * d * d + 2 * d * f + f + d + 4 * d\n"


def lost(report):
    return {item.id for item in report.items if item.score < item.max_score}


def test_syntax_error_costs_only_the_definition_it_sits_in(submission, grade):
    folder = submission(edits={MODEL: [(REFERENCE_GELU, "    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0))\n")]})
    report = grade(folder)
    # FeedForward calls the module's gelu through GELU, but the probe swaps in an exact GELU
    assert lost(report) == {"gelu"}
    feedback = report.item("gelu").feedback_en
    assert "SyntaxError" in feedback and "model.py line" in feedback
    assert any("SyntaxError" in problem for problem in report.problems)


def test_a_hang_costs_only_that_exercise(submission, grade):
    folder = submission(edits={MODEL: [(REFERENCE_GELU, "    while True:\n        pass\n")]})
    report = grade(folder, timeout=2)
    assert lost(report) == {"gelu"}
    assert report.item("gelu").status == "timeout"
    assert "time limit" in report.item("gelu").feedback_en


def test_a_crash_costs_only_that_exercise(submission, grade):
    folder = submission(edits={MODEL: [(REFERENCE_LEDGER, "    import os\n    os._exit(3)\n")]})
    report = grade(folder)
    assert lost(report) == {"parameter_count"}
    assert report.item("parameter_count").status == "error"


def test_an_exception_is_reported_with_its_type_and_message(submission, grade):
    folder = submission(edits={MODEL: [(REFERENCE_LEDGER, "    raise ValueError('ledger broke')\n")]})
    report = grade(folder)
    assert lost(report) == {"parameter_count"}
    assert "ValueError: ledger broke" in report.item("parameter_count").feedback_en


def test_stderr_output_and_warnings_never_cost_a_correct_answer(submission, grade):
    noisy = ("    import sys, warnings\n    print('debug', file=sys.stderr)\n"
             "    warnings.warn('just a warning')\n" + REFERENCE_GELU)
    folder = submission(edits={MODEL: [(REFERENCE_GELU, noisy)]},
                        answers={"increment_gap": "import sys\nprint('noise', file=sys.stderr)\n"
                                                  "a = 1 / math.sqrt(1 + EPS)\n"
                                                  "increment_gap = 0.5 * gelu_exact(a) - 0.5 * gelu_exact(-a)"})
    report = grade(folder)
    assert report.score == report.max_score
    assert "debug" in report.item("gelu").output


def test_wrong_dtype_is_named(submission, grade):
    folder = submission(edits={MODEL: [(REFERENCE_GELU, "    x = x.double()\n" + REFERENCE_GELU)]})
    report = grade(folder)
    assert lost(report) == {"gelu"}
    assert "dtype should be torch.float32, got torch.float64" in report.item("gelu").feedback_en


def test_wrong_return_type_is_named(submission, grade):
    folder = submission(edits={MODEL: [(REFERENCE_GELU, "    return x.tolist()\n")]})
    report = grade(folder)
    assert lost(report) == {"gelu"}
    assert "expected a tensor, got a list" in report.item("gelu").feedback_en


def test_nan_output_is_named(submission, grade):
    folder = submission(edits={MODEL: [(REFERENCE_GELU, "    return x * float('nan')\n")]})
    report = grade(folder)
    assert lost(report) == {"gelu"}
    assert "NaN" in report.item("gelu").feedback_en


def test_missing_package_costs_the_package_exercises_only(submission, grade):
    import shutil

    folder = submission()
    shutil.rmtree(folder / "hero_transformer")
    report = grade(folder)
    exercises = {item.id for item in report.items if item.kind == "exercise"}
    # the notebook imports the package in its first cell, so the answers that need its helpers go too;
    # the grade still completes and says why
    assert exercises <= lost(report)
    assert any("hero_transformer/ is missing" in p for p in report.problems)


def test_malformed_notebook_costs_the_answers_only(submission, grade):
    folder = submission()
    (folder / "ch05_block.ipynb").write_text('{"cells": [', encoding="utf-8")
    report = grade(folder)
    assert {item.id for item in report.items if item.kind == "exercise"}.isdisjoint(lost(report))
    assert {item.id for item in report.items if item.kind == "answer"} == lost(report)
    assert "could not be read as a notebook" in report.item("residual_output").feedback_en


def test_non_utf8_file_is_reported_and_the_rest_graded(submission, grade):
    folder = submission()
    path = folder / MODEL
    path.write_bytes(path.read_bytes().replace(b"# One tolerance", b"# \xff\xfe tolerance")
                     + b"\n# caf\xe9\n")
    report = grade(folder)
    assert report.score == report.max_score
    assert any("not UTF-8" in problem for problem in report.problems)


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
def test_a_detached_grandchild_neither_stalls_the_task_nor_reaches_the_worker(submission, grade):
    hostile = (
        "    import os, time\n"
        "    try:\n"
        "        open(f'/proc/{os.getppid()}/mem', 'rb').read(1)\n"
        "        print('worker memory is open')\n"
        "    except OSError:\n"
        "        print('worker memory is closed')\n"
        "    if os.fork() == 0:\n"
        "        os.setsid()\n"
        "        time.sleep(60)\n"
        "        os._exit(0)\n"
        "    print('tasks alive:', len([p for p in os.listdir('/proc') if p.isdigit()]))\n"
    )
    folder = submission(edits={MODEL: [(REFERENCE_GELU, hostile + REFERENCE_GELU)]})
    first, second = grade(folder), grade(folder)
    assert first.item("gelu").status == "passed"
    assert "worker memory is closed" in first.item("gelu").output
    assert "worker memory is open" not in first.item("gelu").output
    # the sweep after each task leaves the next task of the same workers as many processes as the first
    alive = [[line for line in report.item("gelu").output.splitlines() if line.startswith("tasks alive")][0]
             for report in (first, second)]
    assert alive[0] == alive[1], alive

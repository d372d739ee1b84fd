"""Chapter 5 through the grader: its own figures, answers and feedback.  The proofs every
chapter gets (each fault, variant and forbidden shortcut, every exercise graded alone) are in
tests/test_catalogues.py."""

import re
import threading
import time

import pytest
import torch

from autograder import engine, release

from conftest import CHAPTER, FAULTS, SAMPLES


@pytest.fixture(scope="module")
def sample_reports(reports):
    return {name: report for (assignment_id, name), report in reports.items() if assignment_id == CHAPTER.id}


def test_chapter_five_is_worth_21_points(sample_reports):
    assert sample_reports["reference"].max_score == 21


def test_wrong_answers_in_the_notebook_cost_only_those_cells(submission, grade):
    folder = submission(edits={"ch05_block.ipynb": [
        ("per_block_params = 4 * 48 * 48 + 2 * 48 * 192 + 192 + 48 + 4 * 48",
         "per_block_params = 4 * 48 * 48 + 2 * 48 * 192 + 4 * 48 + 7"),
    ]})
    report = grade(folder)
    lost = {item.id for item in report.items if item.score < item.max_score}
    # total_params is computed from per_block_params in the sample, so it falls with it
    assert lost == {"per_block_params", "total_params"}
    # the feedback names the student's own value, never the expected one
    feedback = report.item("per_block_params").feedback_zh + report.item("per_block_params").feedback_en
    assert "27847" in feedback and "28080" not in feedback


def test_answers_accept_tensors_and_tuples(submission, grade):
    folder = submission(answers={
        "residual_output": "residual_output = torch.tensor([-0.0820600, 0.9255376, 5.6371087])",
        "sample_variance_output": "sample_variance_output = (-2 / 7 ** 0.5, -1 / 7 ** 0.5, 3 / 7 ** 0.5)",
        "shape_drill": "shape_drill = dict(layer_norm=(3, 5, 8), per_head_q=[3, 4, 5, 2], attention_weights=[3, 4, 5, 5], "
                       "heads_merged=torch.Size([3, 5, 8]), ffn_hidden=[3, 5, 32], block_output=[3, 5, 8])",
    })
    report = grade(folder)
    assert report.score == report.max_score, [(i.id, i.feedback_en) for i in report.items if i.score < i.max_score]


def test_release_stubs_are_what_the_stub_sample_holds():
    assert release.student_package(5) == {
        path: (SAMPLES / "stubs" / path).read_text(encoding="utf-8") for path in release.student_package(5)
    }


def _expected_texts():
    """Every expected value a student could copy, as text: (numbers, lists).  Numbers: exact
    answers, float answers to their fourth digit, the reference ledger of each parameter_count case
    (with three digits or more: 0.5 or -1.0 also stand in the chapter's own words); lists: the
    shape drill's shapes."""
    numbers, lists = set(), set()
    for answer in CHAPTER.answers:
        value = engine.expected_answer(answer.id)
        values = value.values() if isinstance(value, dict) else value if isinstance(value, list) else [value]
        for item in values:
            if isinstance(item, list):
                lists.add(str(item))
            else:
                numbers.add(str(item))
                if isinstance(item, float):
                    numbers.add(f"{item:.4f}")
    numbers |= {str(v) for v in engine.reference_outputs("parameter_count").values()}
    return {text for text in numbers if sum(ch.isdigit() for ch in text.lstrip("-0.")) >= 3}, lists


def test_feedback_of_wrong_work_reveals_no_expected_value(sample_reports, submission, grade):
    """Every answer wrong, and every faulty sample: no expected number, list or shape, and no
    error size, anywhere in the report.  (A faulty exercise's feedback may name its case's input
    shapes, which the shape drill's answers partly equal; the lists are checked on the answers.)"""
    wrong = grade(submission(answers={a.id: f"{a.variable} = 7" for a in CHAPTER.answers}))
    assert all(item.status == "failed" for item in wrong.items if item.kind == "answer")
    numbers, lists = _expected_texts()
    assert {"28080", "90672", "1074", "107776", "424"} <= numbers and "[3, 5, 8]" in lists
    for report, forbidden in [(wrong, numbers | lists)] + [(sample_reports[f.id], numbers) for f in FAULTS]:
        text = str(report.to_json())
        # a number as a number, not digits inside another one (the student's own 0.1074 is not 1074)
        leaked = sorted(t for t in forbidden if t in lists and t in text
                        or t not in lists and re.search(rf"(?<![\d.]){re.escape(t)}(?!\d)", text))
        assert not leaked, f"{report.submission}: {leaked}"
        assert "largest error" not in text and "最大误差" not in text


@pytest.mark.parametrize("fault_id, words", [("ledger_tied_head", "tied"), ("ledger_without_final_norm", "final LayerNorm")])
def test_a_wrong_ledger_names_the_misconception(sample_reports, fault_id, words):
    item = sample_reports[fault_id].item("parameter_count")
    assert item.score == 0 and words in item.feedback_en, item.feedback_en


def test_the_seeds_own_block_body_earns_full_marks(sample_reports):
    """Seed 000 answers TransformerBlock.forward with the submodule names ln_attention, attention,
    ln_feedforward and feedforward; that body must run unchanged and earn the block's points."""
    report = sample_reports["correct_seed_block"]
    assert report.item("block").score == report.item("block").max_score == 3
    assert report.score == report.max_score


def test_a_body_that_writes_into_its_inputs_changes_no_cached_case():
    """The grader keeps each exercise's cases once per process and sends them to every submission;
    a body run in-process (a fault, a test double, an in-place exercise) that writes into its
    inputs must not change what later submissions are graded on."""
    module = engine.reference_module("gelu")
    before = {name: case["x"].clone() for name, case in engine.cases_of("gelu").items()}
    saved = module.__dict__["gelu"]
    module.gelu = lambda x: x.mul_(2.0)
    try:
        for name in before:
            engine._run(module, "gelu", name)
    finally:
        module.gelu = saved
    assert all(torch.equal(engine.cases_of("gelu")[name]["x"], x) for name, x in before.items())


def test_a_judge_never_runs_a_reference_another_thread_patched(pool, monkeypatch):
    """engine.Grading judges each submission in the thread where its last task replied, so judges
    run side by side, and a judge diagnosing a faulty submission patches the fault's body into the
    shared reference module (engine.outputs_with).  A reference submission judged while post_ln is
    patched into the reference block must still be judged against the true reference: here the
    patch is held open until well after the reference submission's task has replied."""
    post_ln = next(entry.function for entry in engine.faults_of("block") if entry.id == "post_ln")
    patched, release_patch, replied = threading.Event(), threading.Event(), threading.Event()

    def held_open(*args, **kwargs):
        patched.set()
        release_patch.wait(120)
        return post_ln(*args, **kwargs)

    def run_and_signal(*args):
        reply = real_run(*args)
        replied.set()
        return reply

    real_run = engine._safe_run
    monkeypatch.setattr(engine, "_safe_run", run_and_signal)
    engine.reference_outputs.cache_clear()  # the judge computes them now, while the patch is in place
    diagnosis = threading.Thread(target=engine.outputs_with, args=("block", held_open))
    diagnosis.start()
    try:
        assert patched.wait(120)
        with engine.Grading(pool) as grading:
            graded = grading.submit(SAMPLES / "reference", CHAPTER.id, only=["block"])
            assert replied.wait(300)
            time.sleep(2)  # ample for an unguarded judge (milliseconds) to finish against the patched block
            release_patch.set()
            report = graded.result(timeout=300)
    finally:
        release_patch.set()
        diagnosis.join()
        engine.reference_outputs.cache_clear()
    assert report.item("block").status == "passed", report.item("block").feedback_en

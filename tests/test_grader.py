"""Every check of the grader, proven both ways: the reference passes it, a known fault fails it."""

import shutil

import pytest

from autograder import engine, registry, release

from conftest import CHAPTER, CORRECT, FAULTS, FORBIDDEN, SAMPLES, SUMMARY


@pytest.fixture(scope="module")
def sample_reports(pool):
    names = sorted(p.name for p in SAMPLES.iterdir() if p.is_dir())
    reports = engine.grade_many([SAMPLES / name for name in names], "ch05_block", pool=pool)
    return dict(zip(names, reports))


def test_reference_gets_full_marks_on_every_item(sample_reports):
    report = sample_reports["reference"]
    assert report.score == report.max_score == 21
    assert all(item.status == "passed" for item in report.items), [(i.id, i.feedback_en) for i in report.items]
    assert report.devices[0] == "cpu"


def test_stubs_get_zero_and_say_not_implemented(sample_reports):
    report = sample_reports["stubs"]
    assert report.score == 0
    for item in report.items:
        if item.kind == "exercise":
            assert item.status == "not_implemented"
            assert f"NotImplementedError('{item.id}')" in item.feedback_zh
            assert "not implemented yet" in item.feedback_en
        else:
            assert item.status == "not_implemented" and "not answered yet: cell" in item.feedback_en


@pytest.mark.parametrize("fault", FAULTS, ids=lambda f: f.id)
def test_each_fault_loses_points_exactly_on_its_exercise(sample_reports, fault):
    report = sample_reports[fault.id]
    lost = {item.id for item in report.items if item.score < item.max_score}
    assert lost == {fault.exercise}
    item = report.item(fault.exercise)
    # the feedback names this misconception, in both languages
    assert fault.zh in item.feedback_zh and fault.en in item.feedback_en


def test_every_check_is_passed_by_the_reference_and_failed_by_some_fault(sample_reports):
    passed_by_reference = {(i.id, c.name) for i in sample_reports["reference"].items for c in i.checks if c.passed}
    failed_by = {}
    for fault in FAULTS:
        for item in sample_reports[fault.id].items:
            for check in item.checks:
                if not check.passed:
                    failed_by.setdefault((item.id, check.name), fault.id)
    exercise_checks = {(i.id, c.name) for i in sample_reports["reference"].items if i.kind == "exercise"
                       for c in i.checks}
    assert exercise_checks <= passed_by_reference
    never_failed = sorted(exercise_checks - set(failed_by))
    assert not never_failed, f"checks no known fault fails: {never_failed}"


def test_kill_matrix_has_no_survivor(sample_reports):
    """Print the sample x exercise matrix; a fault that keeps full marks is a survivor."""
    exercises = [e.id for e in CHAPTER.exercises]
    matrix = [f"{'sample':<26}" + "".join(f"{e[:15]:>17}" for e in exercises)]
    survivors = []
    for fault in FAULTS:
        report = sample_reports[fault.id]
        row = [report.item(e).score for e in exercises]
        matrix.append(f"{fault.id:<26}" + "".join(f"{s:>17g}" for s in row))
        if report.item(fault.exercise).score == report.item(fault.exercise).max_score:
            survivors.append(fault.id)
    SUMMARY["kill matrix"] = "\n".join(matrix)
    SUMMARY["faulty"] = f"faulty {len(FAULTS) - len(survivors)}/{len(FAULTS)} caught"
    print(SUMMARY["faulty"])
    assert len(FAULTS) >= 30
    assert not survivors


@pytest.mark.parametrize("variant", CORRECT, ids=lambda v: v.id)
def test_each_correct_variant_gets_full_marks(sample_reports, variant):
    report = sample_reports[variant.sample]
    assert report.score == report.max_score, [(i.id, i.feedback_en) for i in report.items if i.score < i.max_score]


def test_correct_catalogue_is_accepted_whole(sample_reports):
    accepted = [v for v in CORRECT if sample_reports[v.sample].score == sample_reports[v.sample].max_score]
    SUMMARY["correct"] = f"correct {len(accepted)}/{len(CORRECT)} accepted"
    assert len(CORRECT) >= 10 and len(accepted) == len(CORRECT)
    # every exercise has more than one accepted way of writing it
    assert {v.exercise for v in CORRECT} == {e.id for e in CHAPTER.exercises}


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
        leaked = sorted(t for t in forbidden if t in text)
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


@pytest.fixture(scope="module")
def graded_alone(pool, tmp_path_factory):
    """Every correct variant and the reference body of each exercise, in a package whose other
    exercises are all stubs, and again all faulty (each with the first fault of its catalogue)."""
    root = tmp_path_factory.mktemp("alone")
    bodies = [(v.id, v.exercise, v.function) for v in CORRECT]
    bodies += [(f"reference_{e.id}", e.id, None) for e in CHAPTER.exercises]
    first_fault = {e.id: engine.faults_of(e.id)[0] for e in CHAPTER.exercises}
    folders, cases = [], []
    for name, exercise_id, function in bodies:
        for others in ("stubbed", "faulty"):
            def replace(exercise, body, indent, exercise_id=exercise_id, function=function, others=others):
                if exercise.id == exercise_id:
                    return release._function_body(function, indent) if function else body
                if others == "stubbed":
                    return release.stub_lines(exercise, indent)
                return release._function_body(first_fault[exercise.id].function, indent)
            folder = root / f"{name}-{others}"
            shutil.copytree(SAMPLES / "reference", folder)
            release.write_files(folder, release.render_package(replace))
            folders.append(folder)
            cases.append((name, exercise_id, others))
    reports = engine.grade_many(folders, "ch05_block", pool=pool)
    return list(zip(cases, reports))


def test_every_exercise_is_graded_alone(graded_alone):
    """A correct body earns full marks whatever state the other exercises are in."""
    wrong = [(name, others, report.item(exercise_id).feedback_en)
             for (name, exercise_id, others), report in graded_alone
             if report.item(exercise_id).score != report.item(exercise_id).max_score]
    assert not wrong, wrong
    # and the others really were broken: every other exercise lost its points
    for (name, exercise_id, others), report in graded_alone:
        lost = {item.id for item in report.items if item.kind == "exercise" and item.score == 0}
        assert lost == {e.id for e in CHAPTER.exercises} - {exercise_id}, (name, others, lost)


@pytest.mark.parametrize("entry", FORBIDDEN, ids=lambda s: s.id)
def test_a_forbidden_shortcut_loses_its_exercise_and_names_the_call(sample_reports, entry):
    report = sample_reports[entry.sample]
    lost = {item.id for item in report.items if item.score < item.max_score}
    assert lost == {entry.exercise}
    exercise = next(e for e in CHAPTER.exercises if e.id == entry.exercise)
    item = report.item(entry.exercise)
    # the values are right: the shortcut is the only thing that costs the points
    assert [check.name for check in item.checks if not check.passed] == ["uses no forbidden shortcut"]
    for call in (forbid.call for forbid in exercise.forbids):
        assert call in item.feedback_en and call in item.feedback_zh, item.feedback_en


def test_forbidden_catalogue_summary(sample_reports):
    caught = [s for s in FORBIDDEN if sample_reports[s.sample].item(s.exercise).score == 0
              and "the grader saw" in sample_reports[s.sample].item(s.exercise).feedback_en]
    SUMMARY["forbidden"] = f"forbidden {len(caught)}/{len(FORBIDDEN)} shortcuts caught"
    assert len(caught) == len(FORBIDDEN)
    assert {s.exercise for s in FORBIDDEN} == {e.id for e in CHAPTER.exercises if e.forbids}

"""Every chapter's catalogues, proven both ways for every assignment the registry finds: the
reference passes every check, the stubs earn nothing, each fault loses exactly its exercise and
is named, each correct variant earns full marks (also with every other exercise stubbed or
faulty), each forbidden shortcut loses its exercise and names the call, and every check of every
exercise is failed by some fault.  A new chapter gets these proofs by adding its folder."""

import shutil

import pytest

from autograder import engine, reach, registry, release

from conftest import BESIDE_A_SHORTCUT, SAMPLE_ROOTS, SUMMARY, TESTED, charge_nothing

ASSIGNMENTS = TESTED


def entries(kind):
    return [(assignment, entry) for assignment in ASSIGNMENTS for entry in assignment.entries(kind)]


def entry_id(value):
    return value.id


@pytest.mark.parametrize("assignment", ASSIGNMENTS, ids=entry_id)
def test_reference_gets_full_marks_on_every_item(reports, assignment):
    report = reports[assignment.id, "reference"]
    assert report.score == report.max_score == sum(assignment.points().values())
    assert all(item.status == "passed" for item in report.items), [(i.id, i.feedback_en) for i in report.items]
    assert report.devices[0] == "cpu"


@pytest.mark.parametrize("assignment", ASSIGNMENTS, ids=entry_id)
def test_stubs_get_zero_and_say_not_implemented(reports, assignment):
    report = reports[assignment.id, "stubs"]
    assert report.score == 0
    for item in report.items:
        if item.kind == "exercise":
            assert item.status == "not_implemented"
            assert f"NotImplementedError('{item.id}')" in item.feedback_zh
            assert "not implemented yet" in item.feedback_en
        else:
            assert item.status == "not_implemented" and "not answered yet" in item.feedback_en
            assert "counting from 1" in item.feedback_en and "从 1 数起" in item.feedback_zh


@pytest.mark.parametrize("assignment, fault", entries("fault"), ids=entry_id)
def test_each_fault_loses_points_exactly_on_its_exercise(reports, assignment, fault):
    report = reports[assignment.id, fault.sample]
    assert {item.id for item in report.items if item.score < item.max_score} == {fault.exercise}
    item = report.item(fault.exercise)
    # the feedback names this misconception and no other fault's, in both languages
    assert item.misconception == fault.id
    assert fault.zh in item.feedback_zh and fault.en in item.feedback_en


@pytest.mark.parametrize("assignment", ASSIGNMENTS, ids=entry_id)
def test_every_check_is_passed_by_the_reference_and_failed_by_some_fault(reports, assignment):
    reference = reports[assignment.id, "reference"]
    passed_by_reference = {(i.id, c.name) for i in reference.items for c in i.checks if c.passed}
    failed_by = {}
    for fault in assignment.entries("fault"):
        for item in reports[assignment.id, fault.sample].items:
            for check in item.checks:
                if not check.passed:
                    failed_by.setdefault((item.id, check.name), fault.id)
    exercise_checks = {(i.id, c.name) for i in reference.items if i.kind == "exercise" for c in i.checks}
    assert exercise_checks <= passed_by_reference
    never_failed = sorted(exercise_checks - set(failed_by))
    assert not never_failed, f"checks no known fault fails: {never_failed}"
    # every exercise has a fault to prove its checks with
    assert {fault.exercise for fault in assignment.entries("fault")} == {e.id for e in assignment.exercises}


def test_kill_matrix_has_no_survivor(reports):
    """Print the sample x exercise matrix; a fault that keeps full marks is a survivor."""
    matrix, survivors, faults = [], [], entries("fault")
    for assignment in ASSIGNMENTS:
        exercises = [e.id for e in assignment.exercises]
        matrix.append(f"{assignment.id:<26}" + "".join(f"{e[:15]:>17}" for e in exercises))
        for fault in assignment.entries("fault"):
            report = reports[assignment.id, fault.sample]
            matrix.append(f"{fault.id:<26}" + "".join(f"{report.item(e).score:>17g}" for e in exercises))
            if report.item(fault.exercise).score == report.item(fault.exercise).max_score:
                survivors.append(fault.id)
    SUMMARY["kill matrix"] = "\n".join(matrix)
    SUMMARY["faulty"] = f"faulty {len(faults) - len(survivors)}/{len(faults)} caught"
    assert not survivors


@pytest.mark.parametrize("assignment, variant", entries("correct"), ids=entry_id)
def test_each_correct_variant_gets_full_marks(reports, assignment, variant):
    report = reports[assignment.id, variant.sample]
    assert report.score == report.max_score, [(i.id, i.feedback_en) for i in report.items if i.score < i.max_score]


def test_correct_catalogue_is_accepted_whole(reports):
    correct = entries("correct")
    accepted = [v for a, v in correct if reports[a.id, v.sample].score == reports[a.id, v.sample].max_score]
    SUMMARY["correct"] = f"correct {len(accepted)}/{len(correct)} accepted"
    assert len(accepted) == len(correct)
    for assignment in ASSIGNMENTS:  # every exercise has another accepted way of writing it
        assert {v.exercise for v in assignment.entries("correct")} == {e.id for e in assignment.exercises}


@pytest.fixture(scope="module")
def graded_alone(pool, tmp_path_factory):
    """Every correct variant and the reference body of each exercise, in a package whose other
    exercises are all stubs, and again all faulty (each with the first fault of its catalogue)."""
    root = tmp_path_factory.mktemp("alone")
    results = []
    for assignment in ASSIGNMENTS:
        bodies = [(v.id, v.exercise, v) for v in assignment.entries("correct")]
        bodies += [(f"reference_{e.id}", e.id, None) for e in assignment.exercises]
        first_fault = {e.id: engine.faults_of(e.id)[0] for e in assignment.exercises}
        folders, cases = [], []
        for name, exercise_id, variant in bodies:
            for others in ("stubbed", "faulty"):
                def replace(exercise, body, indent, exercise_id=exercise_id, variant=variant, others=others):
                    if exercise.id == exercise_id:
                        return variant.body(indent) if variant else body
                    if exercise.chapter != assignment.chapter:
                        return body if exercise.chapter < assignment.chapter else release.stub_lines(exercise, indent)
                    if others == "stubbed":
                        return release.stub_lines(exercise, indent)
                    return first_fault[exercise.id].body(indent)
                folder = root / assignment.id / f"{name}-{others}"
                shutil.copytree(SAMPLE_ROOTS[assignment.id] / "reference", folder)
                release.write_files(folder, release.render_package(replace))
                folders.append(folder)
                cases.append((assignment, name, exercise_id, others))
        results += zip(cases, engine.grade_many(folders, assignment.id, pool=pool))
    return results


def test_every_exercise_is_graded_alone(graded_alone):
    """A correct body earns full marks whatever state the other exercises are in."""
    wrong = [(name, others, report.item(exercise_id).feedback_en)
             for (_, name, exercise_id, others), report in graded_alone
             if report.item(exercise_id).score != report.item(exercise_id).max_score]
    assert not wrong, wrong
    # and the others really were broken: every other exercise lost its points
    for (assignment, name, exercise_id, others), report in graded_alone:
        lost = {item.id for item in report.items if item.kind == "exercise" and item.score == 0}
        assert lost == {e.id for e in assignment.exercises} - {exercise_id}, (name, others, lost)


def forbidden_entries(how):
    """The forbidden catalogue by how each body must lose: "seen" (the forbidden-call check fails),
    "raises" (it takes the shortcut in a thread or a forked process, which the task cannot start)."""
    return [(a, e) for a, e in entries("forbidden") if bool(e.raises) == (how == "raises")]


def _private(entry):
    """What reach.py names in the body's own source (the package's other code is the reference's)."""
    return reach.reaches({"body.py": entry.source}, {}, {registry.PACKAGE})


@pytest.fixture(scope="module")
def watch_only(pool):
    """{(assignment id, sample): report} of every forbidden body whose source reach.py names, graded
    without reading the source: the layer beneath (the watch, the one-thread task) proven on its own."""
    named = [(a, e) for a, e in entries("forbidden") if _private(e)]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(engine, "reaches_by_exercise", charge_nothing)
        graded = engine.grade_many([SAMPLE_ROOTS[a.id] / e.sample for a, e in named], pool=pool)
    return {(a.id, e.sample): report for (a, e), report in zip(named, graded)}


@pytest.mark.parametrize("assignment, entry", forbidden_entries("seen"), ids=entry_id)
def test_a_forbidden_shortcut_loses_its_exercise_and_names_the_call(reports, watch_only, assignment, entry):
    report = reports[assignment.id, entry.sample]
    assert {item.id for item in report.items if item.score < item.max_score} == {entry.exercise}
    item = report.item(entry.exercise)
    failed = [check.name for check in item.checks if not check.passed]
    # a body that names something private (torch._C, torch.ops.aten._softmax, an import of threading)
    # loses by its source alone, which the feedback quotes, and nothing it printed or raised is shown
    private = _private(entry)
    if private:
        assert failed == ["reaches nothing private"], (failed, private)
        assert f": {private[0].what}" in item.feedback_en and "torch 的内部接口" in item.feedback_zh, item.feedback_en
        assert not item.output, item.output
        # and the watch, on its own: it sees nothing of a body that switches it off first (`unseen`:
        # the source is all that costs it), and every other one as before
        report = watch_only[assignment.id, entry.sample]
        item = report.item(entry.exercise)
        if entry.unseen:
            assert report.score == report.max_score, item.feedback_en
            return
        assert {i.id for i in report.items if i.score < i.max_score} == {entry.exercise}
        failed = [check.name for check in item.checks if not check.passed]
    assert not entry.unseen, f"{entry.id} is marked unseen, but nothing in its source is named"
    forbids = assignment.item(entry.exercise).forbids
    failed = [name for name in failed if name not in BESIDE_A_SHORTCUT]  # what the route itself cannot do
    if not entry.route:
        # the values are right: the shortcut is the only thing that costs the points
        assert failed == ["uses no forbidden shortcut"]
        for forbid in forbids:
            if forbid is not registry.INTERNAL_ROUTES:
                assert forbid.call in item.feedback_en and forbid.call in item.feedback_zh, item.feedback_en
        return
    # through torch's internals: the generic call is seen (first), naming the internal function; an
    # internal that calls a forbidden operator by name is seen as that call too, never as a wrong value
    assert failed and set(failed) == {"uses no forbidden shortcut"}, failed
    generic = registry.INTERNAL_ROUTES
    assert generic.call in item.feedback_en and generic.call_zh in item.feedback_zh, item.feedback_en
    assert f"(through {entry.route}" in item.feedback_en and f"经由 {entry.route}" in item.feedback_zh, \
        item.feedback_en


@pytest.mark.parametrize("assignment, entry", forbidden_entries("raises"), ids=entry_id)
def test_a_shortcut_in_a_thread_or_process_loses_its_exercise_by_raising(reports, watch_only, assignment, entry):
    """A task is one single-threaded process (confine.forbid_new_processes): starting the thread or
    the process that would run the forbidden call out of the watch's sight raises, on every case.
    Such a body imports threading or multiprocessing, which reach.py names first: the refusal is
    proven on the grading that does not read the source."""
    assert _private(entry)
    assert {i.id for i in reports[assignment.id, entry.sample].items if i.score < i.max_score} == {entry.exercise}
    report = watch_only[assignment.id, entry.sample]
    assert {item.id for item in report.items if item.score < item.max_score} == {entry.exercise}
    item = report.item(entry.exercise)
    # every case that reaches the thread or the fork fails by the refusal (a case whose input the body
    # refuses first, with the exercise's own ValueError, still passes)
    refused = [check for check in item.checks if check.name.startswith("matches the reference") and not check.passed]
    assert refused and all(entry.raises in check.en and entry.raises in check.zh for check in refused), refused
    assert entry.raises in item.feedback_en and entry.raises in item.feedback_zh, item.feedback_en
    assert "each task is one process with one thread" in item.feedback_en, item.feedback_en


def test_forbidden_catalogue_summary(reports):
    forbidden = entries("forbidden")
    caught = [s for a, s in forbidden if reports[a.id, s.sample].item(s.exercise).score == 0
              and (s.raises or "the grader saw" if not _private(s) else "which the grader does not grade")
              in reports[a.id, s.sample].item(s.exercise).feedback_en]
    SUMMARY["forbidden"] = f"forbidden {len(caught)}/{len(forbidden)} shortcuts caught"
    assert len(caught) == len(forbidden)
    for assignment in ASSIGNMENTS:  # every forbidding exercise has its shortcuts proven
        assert {s.exercise for s in assignment.entries("forbidden")} == \
            {e.id for e in assignment.exercises if e.forbids}


def test_per_chapter_figures(reports):
    """One line per chapter for `make test`'s summary: its items and points, and how each of its
    catalogues fared (the tests above assert each entry; this collects them)."""
    lines = []
    for assignment in sorted(ASSIGNMENTS, key=lambda a: a.chapter):
        points = assignment.points()
        exercise_points = sum(points[e.id] for e in assignment.exercises)
        answer_points = sum(points[a.id] for a in assignment.answers)
        counts = {}
        for kind in ("fault", "correct", "forbidden"):
            entries_of_kind = assignment.entries(kind)
            won = [e for e in entries_of_kind
                   if (reports[assignment.id, e.sample].item(e.exercise).score
                       == reports[assignment.id, e.sample].item(e.exercise).max_score) == (kind == "correct")]
            counts[kind] = f"{len(won)}/{len(entries_of_kind)}"
        lines.append(f"{assignment.id:<17} {len(assignment.exercises)} exercises ({exercise_points:g} pts), "
                     f"{len(assignment.answers)} answers ({answer_points:g} pts); faults lose {counts['fault']}, "
                     f"variants win {counts['correct']}, shortcuts caught {counts['forbidden']}")
        assert len(assignment.entries("fault")) >= 8 and len(assignment.entries("correct")) >= 3, assignment.id
    SUMMARY["chapters"] = "\n".join(lines)


def _stand_in_bodies(function, arity, is_method):
    """Ways a submission could put a probes function in an exercise's place: called with the
    exercise's own arguments, or (for a method) with all but `self`."""
    import inspect

    try:
        required = [p for p in inspect.signature(function).parameters.values()
                    if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        return []
    bodies = [function] if len(required) == arity else []
    if is_method and len(required) == arity - 1:
        bodies.append(lambda self, *args, **kwargs: function(*args, **kwargs))
    return bodies


@pytest.mark.parametrize("assignment", ASSIGNMENTS, ids=entry_id)
def test_no_test_double_of_any_chapter_is_a_solution(assignment):
    """Student code runs in the worker next to every chapter's probes (imported before any fork),
    so it could call their test doubles: none of them, put in an exercise's place, may reproduce
    the reference on that exercise's cases."""
    import inspect

    functions = []
    for a in registry.ASSIGNMENTS.values():
        probes_module = a.part("probes")
        for name, value in vars(probes_module).items():
            if getattr(value, "__module__", None) != probes_module.__name__ or name in ("make_cases", "run_case"):
                continue
            if inspect.isfunction(value):
                functions.append((a.id, name, value))
            elif inspect.isclass(value):  # a double's methods, on an instance made without arguments
                try:
                    instance = value()
                except Exception:  # noqa: BLE001 (a double built from a case: its methods need that case)
                    continue
                functions += [(a.id, f"{name}.{method}", getattr(instance, method)) for method, member in vars(value).items()
                              if inspect.isfunction(member) and not method.startswith("__")]
    for exercise in assignment.exercises:
        module = engine.reference_module(exercise.id)
        owner_name, _, attribute = exercise.target.rpartition(".")
        owner = getattr(module, owner_name) if owner_name else module
        saved = owner.__dict__[attribute]
        arity = len(inspect.signature(saved).parameters)
        expected = engine.reference_outputs(exercise.id)
        for chapter, name, function in functions:
            for body in _stand_in_bodies(function, arity, bool(owner_name)):
                setattr(owner, attribute, body)
                try:
                    got = {case: engine._run(module, exercise.id, case) for case in expected}
                finally:
                    setattr(owner, attribute, saved)
                assert any(engine.mismatch(got[case], expected[case]) for case in expected), \
                    f"{chapter}'s probes.{name} is a correct body of {exercise.id}"

"""Feedback names no mistake the body does not contain (issue 39, item 4).

Many wrong bodies of many kinds: every first-order mutant of every reference body (the
contract operators' included) and a fixed sample of second-order ones.  For each, the grader's
own diagnosis rule (engine._diagnose, run in this process) says which catalogued misconception
the feedback would name; where it names one, the mutant must have that mistake: its change and
the fault's touch the same tokens of the reference body (mutants.names_its_mistake), unless the
fault's words only say what was observed (Entry.observed).  Each catalogue fault names itself
(tests/test_catalogues.py), and the judgement is proven both ways below.
"""

import dataclasses
import warnings

import pytest

from autograder import engine, mutants, registry

EXERCISES = [e for a in registry.ASSIGNMENTS.values() for e in a.exercises]


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.id)
def test_a_named_misconception_is_the_bodys_own(exercise):
    wrong = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # `x is 1` and torch's notes on the mutants' odd code
        for mutant in mutants.with_second_order(exercise):
            named = engine.diagnosis_in_process(exercise.id, mutant.function())
            if named is not None and not mutants.names_its_mistake(mutant, named):
                wrong.append(f"{mutant.id} ({mutant.operator}) {mutant.diff!r} is told {named.id}: {named.en}")
    assert not wrong, "\n".join(wrong)


def _mutant(exercise_id, old, new):
    exercise = registry.exercise(exercise_id)
    lines = tuple(line.replace(old, new) for line in mutants.release.reference_body(exercise))
    return mutants.Mutant(exercise_id, "by hand", lines, f"{old} -> {new}")


def _fault(exercise_id, fault_id):
    return next(f for f in engine.faults_of(exercise_id) if f.id == fault_id)


def test_the_judgement_both_ways():
    # the fault's own change, written another way on the same tokens: its mistake
    assert mutants.names_its_mistake(_mutant("lr_at", "(step + 1)", "(step * 1)"), _fault("lr_at", "warmup_from_zero"))
    # the same totals from another term: not its mistake (the fault's words were a guess before)
    other = _mutant("parameter_count", "+ f + d + 4 * d", "+ f - d + 4 * d")
    named = _fault("parameter_count", "ledger_norms_2d")
    assert engine.diagnosis_in_process("parameter_count", other.function()) == named
    assert not mutants.names_its_mistake(other, dataclasses.replace(named, observed=False))
    assert mutants.names_its_mistake(other, named)  # its words now say only what was observed


def test_a_contract_only_fault_is_never_named_for_a_body_that_keeps_the_contract():
    # get_batch's one_row_as_views gives the reference's values and hands out views; a body with those
    # values that hands out none (the batch stacked twice) was told so before the contract was compared
    twice = next(m for m in mutants.mutants_of(registry.exercise("get_batch"))
                 if m.operator == "duplicate-statement" and "x = torch.stack" in m.diff)
    named = engine.diagnosis_in_process("get_batch", twice.function())
    assert named is None or named.id != "one_row_as_views"
    views = _fault("get_batch", "one_row_as_views")
    assert engine.diagnosis_in_process("get_batch", views.function) == views


def test_second_order_mutants_are_two_edits_apart():
    exercise = registry.exercise("layer_norm")
    made = mutants.second_order_of(exercise, 5)
    assert len(made) == 5 and len({m.id for m in made}) == 5
    reference = mutants.release.reference_body(exercise)
    for mutant in made:
        assert len(mutants._line_edits(reference, mutant.lines)) >= 2, mutant.diff

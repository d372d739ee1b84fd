"""Inputs left as they were (docs/grading.md, "Inputs left as they were"): probes.run_all notes the
inputs a call leaves changed and puts them back; the engine fails an exercise whose code changes an
input the reference leaves alone, and names it. The catalogue's in-place faults prove the check
end to end (tests/test_catalogues.py: each loses exactly its exercise, with its misconception)."""

import json

import pytest
import torch

from autograder import engine, probes, wire


def writes_into_its_inputs(module, exercise_id, name, case, device):
    """A run_case whose "code under test" changes one input of each case, or none."""
    if name == "tensor":
        case["x"].add_(1.0)
        return case["x"].sum()
    if name == "retyped":
        case["x"].data = case["x"].data.double()  # same values, another dtype
        return 0
    if name == "list":
        case["ids"].append(0)
        return len(case["ids"])
    if name == "nested":
        case["weights"]["w"][0] = 5.0
        return 0
    if name == "raises":
        case["x"].zero_()
        raise ValueError("after writing")
    return case["x"] * 2  # "nan", "untouched": reads only


def test_run_all_names_every_input_a_call_changed_and_puts_it_back():
    nan = torch.tensor([float("nan"), 1.0])
    cases = {"tensor": {"x": torch.ones(3), "k": 2}, "retyped": {"x": torch.ones(2)}, "list": {"ids": [1, 2]},
             "nested": {"weights": {"w": torch.zeros(2)}}, "raises": {"x": torch.ones(2)},
             "nan": {"x": nan}, "untouched": {"x": torch.ones(2), "ids": [3]}}
    outputs = probes.run_all(writes_into_its_inputs, None, "any", cases, "cpu")
    changed = {name: outcome.get("changed") for name, outcome in outputs.items()}
    assert changed == {"tensor": ["x"], "retyped": ["x"], "list": ["ids"], "nested": ["weights"],
                       "raises": ["x"], "nan": None, "untouched": None}
    assert "raised" in outputs["raises"] and "ok" in outputs["tensor"]
    # every changed input is as it was before the next case (and the next device) reads it
    assert torch.equal(cases["tensor"]["x"], torch.ones(3)) and cases["retyped"]["x"].dtype == torch.float32
    assert cases["list"]["ids"] == [1, 2] and torch.equal(cases["nested"]["weights"]["w"], torch.zeros(2))
    assert torch.equal(cases["raises"]["x"], torch.ones(2))
    # and the reply that carries the names passes the worker's reply schema
    reply = {"body": {"devices": ["cpu"], "outputs": {"cpu": outputs}}}
    assert wire.parse_reply(json.dumps(reply).encode())["body"]["outputs"]["cpu"]["list"]["changed"] == ["ids"]
    outputs["list"]["changed"] = "ids"  # anything else there is a malformed reply
    with pytest.raises(ValueError, match="schema"):
        wire.parse_reply(json.dumps(reply).encode())


def test_only_an_input_of_the_case_that_the_reference_leaves_alone_costs_the_exercise(monkeypatch):
    """The worker's names are believed only where they name an input of that case; an input the
    reference's own call changes (an in-place exercise's argument) may change."""
    monkeypatch.setattr(engine, "reference_changes", lambda exercise_id: {"random": frozenset({"scores"})})
    assert engine._inputs_changed_check("stable_softmax", {"random": {"scores"}}) is None
    assert engine._inputs_changed_check("stable_softmax", {"random": {"not_an_input"}, "no_such_case": {"scores"}}) is None
    check = engine._inputs_changed_check("stable_softmax", {"random": {"scores"}, "large": {"scores"}})
    assert not check.passed and check.kind == "contract"
    assert "scores (case large)" in check.en and "scores（用例 large）" in check.zh and "random" not in check.en


def test_no_reference_body_changes_an_input_of_its_own_cases():
    """Every exercise's reference leaves every input of every case as it was: the check's other side
    (the faults that write in place are in the catalogues)."""
    from autograder import registry

    changing = {exercise.id: {name: sorted(keys) for name, keys in engine.reference_changes(exercise.id).items() if keys}
                for assignment in registry.ASSIGNMENTS.values() for exercise in assignment.exercises}
    assert not any(changing.values()), changing

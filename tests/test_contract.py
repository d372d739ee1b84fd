"""The contract (docs/grading.md, "The contract"): probes.run_all notes the inputs a call leaves
changed (and puts them back), the inputs or earlier results its output shares memory with, and a
second call unlike the first; the engine fails what the exercise's declaration does not allow, and
names it. The catalogue's contract faults prove each rule end to end (tests/test_catalogues.py:
each loses exactly its exercise, with its misconception)."""

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


def shares_or_keeps(module, exercise_id, name, case, device, _cache={}):
    """A run_case whose "code under test" returns a view of an input, a module-level cache, or state."""
    if name == "view":
        return case["x"][1:]
    if name == "itself":
        return (case["x"], 1)
    if name == "cached":  # the same tensor every call: the second call's result is the first's memory
        return _cache.setdefault("ones", torch.ones(3))
    if name == "counter":  # another value on the second call
        _cache["calls"] = _cache.get("calls", 0) + 1
        return _cache["calls"]
    if name == "other_case":  # the argument of the first case it saw, kept in a module-level cache
        return _cache["first"]
    _cache.setdefault("first", case["x"])
    return case["x"] * 2  # "fresh": new memory, the same value every time


def test_run_all_names_shared_memory_and_a_second_call_unlike_the_first():
    cases = {name: {"x": torch.arange(4.0)} for name in ("fresh", "view", "itself", "cached", "counter", "other_case")}
    outputs = probes.run_all(shares_or_keeps, None, "any", cases, "cpu")
    shares = {name: outcome.get("shares") for name, outcome in outputs.items()}
    assert shares == {"fresh": None, "view": ["x"], "itself": ["x"], "cached": [probes.EARLIER], "counter": None,
                      "other_case": [probes.EARLIER]}
    assert [name for name, outcome in outputs.items() if outcome.get("unsteady")] == ["counter"]
    reply = {"body": {"devices": ["cpu"], "outputs": {"cpu": outputs}}}
    assert wire.parse_reply(json.dumps(reply).encode())["body"]["outputs"]["cpu"]["counter"]["unsteady"] is True
    outputs["counter"]["unsteady"] = False  # only `true` is said
    with pytest.raises(ValueError, match="schema"):
        wire.parse_reply(json.dumps(reply).encode())


def test_the_declaration_decides_what_may_change_and_be_shared():
    """The worker's names are believed only where they name an input of that case; an exercise's
    declaration (Exercise.may_change, may_share) lets its own inputs through, nothing else."""
    from autograder import registry

    softmax, split = registry.exercise("stable_softmax"), registry.exercise("split_heads")
    assert split.may_share == ("x",) and not softmax.may_share
    assert engine._contract_checks(softmax, {"random": {"changed": ["not_an_input"]},
                                             "no_such_case": {"changed": ["scores"], "unsteady": True}}) == []
    [check] = engine._contract_checks(softmax, {"random": {"changed": ["scores"]}, "large": {"changed": ["scores"]}})
    assert not check.passed and check.kind == "contract"
    assert "scores (case random)" in check.en and "scores（用例 random）" in check.zh and "large" not in check.en
    assert engine._contract_checks(split, {"counting": {"shares": ["x"]}}) == []
    checks = engine._contract_checks(softmax, {"random": {"shares": ["scores", probes.EARLIER]},
                                               "large": {"unsteady": True}})
    assert [check.name for check in checks] == ["returns new memory, not a view of its inputs",
                                                "keeps nothing between calls", "gives the same result when called again"]
    assert all(check.kind == "contract" and check.zh and check.en for check in checks)
    assert "scores (case random)" in checks[0].en and "case large" in checks[2].en


def test_every_reference_body_keeps_its_own_declared_contract():
    """On every case, the reference changes no input its declaration keeps, returns no memory it may
    not share and gives the same outcome when called again: the checks' other side (the faults that
    break each rule are in the catalogues)."""
    from autograder import registry

    broken = {}
    for assignment in registry.ASSIGNMENTS.values():
        for exercise in assignment.exercises:
            with engine._REFERENCE_IN_USE:
                outputs = probes.run_all(engine.chapter_probes(exercise.id).run_case, engine.reference_module(exercise.id),
                                         exercise.id, engine.fresh_copy(engine.cases_of(exercise.id)), "cpu")
            checks = engine._contract_checks(exercise, outputs)
            if checks:
                broken[exercise.id] = [check.en for check in checks]
    assert not broken, broken

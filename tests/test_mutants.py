"""The hidden tests measured by mutation (autograder/mutants.py, `hero mutants`).

The suite grades a fixed sample of every chapter's mutants through the real grader and fails
on a survivor that the chapter's reviewed list does not hold as equivalent; the full run is
`hero mutants` (docs/grading.md gives its figures).  The operators, the reviewed lists and the
faults written as changes of the reference are checked here too."""

import ast
import textwrap

import pytest

from autograder import engine, mutants, probes, registry, release
from conftest import SUMMARY, TESTED

SAMPLE_PER_EXERCISE = 4  # fixed (the ids that sort first): the same mutants every run


@pytest.fixture(scope="module")
def sampled(pool):
    return mutants.run(TESTED, pool, per_exercise=SAMPLE_PER_EXERCISE)


def _show(outcome):
    return f"{outcome.mutant.exercise} {outcome.mutant.id} ({outcome.mutant.operator}):\n{outcome.mutant.diff}"


def test_every_sampled_mutant_is_killed_or_listed_as_equivalent(sampled):
    survivors = [_show(o) for r in sampled for o in r.survivors]
    made, killed = sum(r.made for r in sampled), sum(r.killed for r in sampled)
    SUMMARY["mutants"] = (f"mutants (a fixed sample of {SAMPLE_PER_EXERCISE} per exercise) {killed}/{made} killed, "
                          f"{sum(r.equivalent for r in sampled)} listed as equivalent, "
                          f"{sum(r.unchecked for r in sampled)} differ only on CUDA (not checked here), "
                          f"{len(survivors)} survived")
    assert not survivors, "mutants the hidden tests do not kill (add a case, or list them with a reason):\n" + \
        "\n".join(survivors)
    assert sum(r.made for r in sampled) >= SAMPLE_PER_EXERCISE * len(
        [e for a in TESTED for e in a.exercises]) * 0.9


def test_a_mutant_is_named_as_a_fault_only_when_it_behaves_as_that_fault_on_every_case(sampled):
    """The grader's own rule, checked again here in-process: a named fault's outcome equals the
    mutant's (run as the reference with the mutant's body) on every hidden case."""
    for result in sampled:
        for outcome in result.outcomes:
            if not outcome.misconception:
                continue
            fault = engine.fault_outputs(result.exercise, outcome.misconception)
            own = engine.outputs_with(result.exercise, outcome.mutant.function())
            for name, value in fault.items():
                got = own[name]
                if isinstance(value, probes.Unusable):
                    assert isinstance(got, probes.Unusable), (_show(outcome), name)
                    assert got.reason.partition(":")[0] == value.reason.partition(":")[0], (_show(outcome), name)
                else:
                    assert not isinstance(got, probes.Unusable) and engine.mismatch(got, value) is None, \
                        (_show(outcome), name, outcome.misconception)


@pytest.mark.parametrize("assignment", TESTED, ids=lambda a: a.id)
def test_the_equivalent_list_holds_only_mutants_still_made(assignment):
    """A listed mutant no longer made means the reference body changed: the entry is stale and
    the new mutants need a review (`hero mutants` says so too)."""
    listed = mutants.equivalents(assignment)
    every = [m.id for e in assignment.exercises for m in mutants.with_second_order(e)]
    made = set(every)
    assert len(made) == len(every), "two mutants share an id (an id hashes its exercise and its body)"
    assert not set(listed) - made, f"stale entries in {assignment.id}/{mutants.EQUIVALENT_FILE}"
    for entry in listed.values():
        assert entry["exercise"] in {e.id for e in assignment.exercises}


def test_the_equivalent_list_is_schema_checked(tmp_path, monkeypatch):
    chapter = tmp_path / "ch99_demo"
    chapter.mkdir()
    (chapter / mutants.EQUIVALENT_FILE).write_text('[[equivalent]]\nexercise = "x"\nmutant = "nothex"\n'
                                                   'change = "-a\\n+b"\nreason = "because it is so"\n')
    monkeypatch.setattr(registry, "CHAPTERS_DIR", tmp_path)
    with pytest.raises(ValueError, match="ch99_demo"):
        mutants.equivalents(type("A", (), {"id": "ch99_demo"}))


def _texts(body):
    return {mutated for _, mutated in mutants._own_mutations(textwrap.dedent(body))}


def test_own_operators_make_the_changes_cosmic_ray_lacks():
    made = _texts("""\
        y = torch.softmax(x @ w, dim=-1)
        z = x.contiguous()
        z = torch.sqrt(y)
        self.helper(a, b)
        if n >= limit:
            raise ValueError("too long")
        return y[:, :t]
        """)
    for expected in ("y = torch.softmax(x @ w)\n",          # a keyword dropped
                     "y = torch.softmax(x * w, dim=-1)\n",  # @ for *
                     "z = x\n",                              # a method call dropped
                     "z = y\n",                              # a function of one argument dropped
                     "self.helper(b, a)\n",                  # arguments swapped
                     "self.helper(a, b)\nself.helper(a, b)\n",  # a call made twice
                     "raise RuntimeError(\"too long\")",     # another exception type
                     "return y[:, :(t + 1)]", "return y[:, :(t - 1)]"):  # off by one
        assert any(expected in text for text in made), expected
    assert any("    pass\n" in text and "raise" not in text for text in made)  # the guard removed


def test_contract_operators_write_into_arguments_drop_a_shift_and_keep_a_result():
    made = {(operator, mutated) for operator, mutated in mutants._contract_mutations(textwrap.dedent("""\
        shifted = scores - scores.amax(dim=-1, keepdim=True)
        exps = scores.exp()
        return exps / exps.sum(dim=-1, keepdim=True)
        """), ("scores",))}
    texts = {operator: [] for operator, _ in made}
    for operator, mutated in made:
        texts[operator].append(mutated)
    assert any("shifted = scores.sub_(scores.amax(dim=-1, keepdim=True))" in t for t in texts["in-place-argument"])
    assert any("exps = scores.exp_()" in t for t in texts["in-place-argument"])
    assert any("shifted = scores\n" in t for t in texts["drop-shift"])  # the maximum no longer subtracted
    [kept] = texts["kept-result"]
    assert "global KEPT_RESULT" in kept and "KEPT_RESULT = exps / exps.sum(dim=-1, keepdim=True)" in kept
    compile("def f(scores):\n" + textwrap.indent(kept, "    "), "<kept>", "exec")
    # a constant kept between calls is the same constant: no mutant
    assert not list(mutants._contract_mutations("return math.inf\n", ()))


def test_mutants_of_a_body_are_distinct_compile_and_stay_in_the_fence():
    exercise = registry.exercise("layer_norm")
    made = mutants.mutants_of(exercise)
    reference = release.reference_body(exercise)
    assert len({m.id for m in made}) == len(made) > 20
    for mutant in made:
        assert list(mutant.lines) != reference
        ast.parse(release.exercise_source(exercise, list(mutant.lines)))  # the signature and docstring kept
        assert mutant.diff.startswith("-") and "\n+" in mutant.diff or mutant.diff.startswith("+")


@pytest.mark.parametrize("assignment", TESTED, ids=lambda a: a.id)
def test_faults_written_as_changes_apply_to_the_reference_once_and_change_it(assignment):
    for entry in assignment.entries():
        if entry.written is not None:
            continue
        reference = "\n".join(release.reference_body(registry.exercise(entry.exercise)))
        assert entry.body("") != reference.splitlines(), entry.id  # the edits change something
        assert callable(entry.function)


def test_a_change_whose_text_left_the_reference_says_so():
    entries, fault = registry.catalogue("fault")
    fault.change("layer_norm", "stale", "过时", "stale", ("no such text in the body", "x"))
    with pytest.raises(ValueError, match="0 times, not once"):
        entries[0].source

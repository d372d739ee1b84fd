"""Chapter 1 (characters to ids): the answers worked out a second way, no graded value written in
the student's notebook, every known mistake named without showing the answer, the probes'
cases within the wire's limits, each fault caught by its exercise's visible check, and the
corpus figures the notebook quotes."""

import math
import re
from collections import Counter

import pytest

from autograder import engine, probes, reference, registry, wire

CHAPTER = registry.ASSIGNMENTS["ch01_tokens"]
tokens = reference.load("tokens")


def test_the_answers_are_what_their_questions_ask():
    """Each answer, worked out here by hand (plain Python, the chapter's conventions)."""
    poem = "枝條鬱鬱，文質彬彬。山林作伴，松桂爲鄰。\n"
    # four characters occur twice: 。 U+3002 < 彬 U+5F6C < 鬱 U+9B31 < ， U+FF0C; then "\n" and 伴 (U+4F34)
    assert engine.expected_answer("poem_vocab") == ["<unk>", "。", "彬", "鬱", "，", "\n", "伴"]
    assert engine.expected_answer("line_ids") == [8, 6, 0, 7, 0, 1, 0, 5, 0, 4, 2, 3]
    # max_size k holds k-1 characters: 4 of them twice, then one each
    covered = [2, 4, 6, 8, 9, 10, 11]
    assert engine.expected_answer("coverage_curve") == pytest.approx([c / len(poem) for c in covered], abs=1e-15)
    p = [0.5, 0.2, 0.2, 0.1]
    assert engine.expected_answer("tiny_entropy") == pytest.approx(-sum(x * math.log(x) for x in p), abs=1e-12)
    # q(1) = 4/11, q(2) = 3/11, q(4) = 1/11
    assert engine.expected_answer("smoothed_unigram") == pytest.approx(
        (math.log(11 / 4) + math.log(11 / 3) + math.log(11)) / 3, abs=1e-12)


def test_every_answer_has_a_known_mistake_and_one_point():
    assert 5 <= len(CHAPTER.answers) <= 9 and all(answer.mistakes for answer in CHAPTER.answers)
    points = CHAPTER.points()
    assert all(points[answer.id] == 1 for answer in CHAPTER.answers)
    assert all(2 <= points[exercise.id] <= 3 for exercise in CHAPTER.exercises)


@pytest.mark.parametrize("exercise", CHAPTER.exercises, ids=lambda e: e.id)
def test_the_cases_travel_within_the_wire_limits(exercise):
    """Every case's inputs and the reference's outputs encode without an error entry (lists of at
    most 64 items, strings of at most 2,000 characters), so nothing is lost on the way."""
    def errors(encoded):
        if isinstance(encoded, dict):
            return ("error" in encoded) + sum(errors(v) for v in encoded.values())
        if isinstance(encoded, list):
            return sum(errors(v) for v in encoded)
        return 0

    for name, case in engine.cases_of(exercise.id).items():
        assert not any(errors(probes.encode(value)) for value in case.values()), name
    for name, value in engine.reference_outputs(exercise.id).items():
        assert not isinstance(value, wire.Unusable), (name, value)
        assert not errors(probes.encode(value)), name


def test_the_cases_that_must_raise_do():
    outputs = {exercise: engine.reference_outputs(exercise) for exercise in ("encode", "decode")}
    assert outputs["encode"]["list_input"] == "raised TypeError"
    assert outputs["decode"]["negative"] == outputs["decode"]["too_large"] == "raised ValueError"


@pytest.mark.parametrize("entry", CHAPTER.entries("fault"), ids=lambda e: e.id)
def test_each_fault_fails_the_visible_check_of_its_exercise(entry):
    """The notebook's own checks already catch every known misconception, before any hidden test."""
    checks = reference.load("tokens_checks")
    check = {"build_vocab": checks.check_build_vocab, "encode": checks.check_encode, "decode": checks.check_decode,
             "coverage": checks.check_coverage,
             "unigram_cross_entropy": checks.check_unigram_cross_entropy}[entry.exercise]
    target = CHAPTER.item(entry.exercise).target
    owner_name, _, attribute = target.rpartition(".")
    owner = getattr(tokens, owner_name) if owner_name else tokens
    saved = owner.__dict__[attribute]
    setattr(owner, attribute, entry.function)
    try:
        with pytest.raises((AssertionError, ValueError, KeyError, TypeError, ZeroDivisionError)):
            check()
    finally:
        setattr(owner, attribute, saved)


def test_the_visible_checks_pass_on_the_reference(capsys):
    checks = reference.load("tokens_checks")
    for check in (checks.check_build_vocab, checks.check_encode, checks.check_decode, checks.check_coverage,
                  checks.check_unigram_cross_entropy):
        check()
    assert capsys.readouterr().out.count("✓") == 5


def test_the_walkthrough_poem_and_its_vocabulary():
    corpus = reference.load("corpus")
    text = corpus.corpus_text([corpus.load_poems("fixture")[94]])
    assert tokens.build_vocab(text, 6) == ["<unk>", "。", "識", "，", "\n", "仁"]
    assert [tokens.coverage(tokens.build_vocab(text, cap), text) for cap in (4, 5, 6)] == [0.24, 0.28, 0.32]


def test_heldout_cross_entropy_is_never_below_the_heldout_texts_own_entropy():
    """Gibbs' inequality, on the fixture: what the notebook asserts on either corpus.  (That the
    held-out figure is below the whole text's in-sample entropy here is a property of these poems,
    not a law: two different texts.)"""
    corpus = reference.load("corpus")
    train, heldout = corpus.split_poems(corpus.load_poems("fixture"))
    coder = tokens.Tokenizer(tokens.build_vocab(corpus.corpus_text(train), 1200))
    a, b = coder.encode(corpus.corpus_text(train)), coder.encode(corpus.corpus_text(heldout))
    own = tokens.unigram_cross_entropy(b, b, coder.vocab_size, alpha=0.0)
    counts = Counter(b)
    assert own == pytest.approx(-sum(n / len(b) * math.log(n / len(b)) for n in counts.values()), abs=1e-12)
    assert own <= tokens.unigram_cross_entropy(a, b, coder.vocab_size, alpha=1.0) < math.log(1200)


@pytest.mark.skipif(not reference.load("corpus").is_cached(),
                    reason="the full corpus is not cached here (`hero corpus fetch`)")
def test_the_full_corpus_figures_the_notebook_quotes():
    corpus = reference.load("corpus")
    poems = corpus.load_poems("full", limit=4003)
    text = corpus.corpus_text(poems)
    itos = tokens.build_vocab(text, 1200)
    ids = tokens.Tokenizer(itos).encode(text)
    assert (len(text), len(set(text))) == (241_763, 5_036)
    assert round(tokens.coverage(itos, text), 4) == 0.8769
    assert round(tokens.unigram_cross_entropy(ids, ids, 1200, alpha=0.0), 3) == 5.660
    notebook = (registry.REPO_ROOT / registry.SOURCE_DIR / CHAPTER.id / CHAPTER.notebook_name).read_text("utf-8")
    for quoted in ("241,763", "5,036", "87.69%", "5.660", "5.651", "5.570", "0.081", "12.9%", "5.2%"):
        assert re.search(re.escape(quoted), notebook), quoted

"""Feedback leads with its most telling line (engine.SPECIFICITY): a named misconception, then a
failed property's own words, then a wrong structure or an exception, and only then "the values
differ", which stays after it as context.  Every front end shows the item's feedback, so each one
leads with that line: the table, --details, nbgrader's cell output and the pytest front end.  A
case's inputs say what they are ("8 ids", "shape [2, 3, 4]"), and no line gives an expected value."""

import re
import shutil
import subprocess
import sys

import pytest
import torch

from autograder import engine, nbgrader_glue, registry, report

from conftest import SAMPLE_ROOTS, apply_edits

CHAPTER = registry.ASSIGNMENTS["ch01_tokens"]
EXERCISE = "unigram_cross_entropy"
# a mistake outside the catalogue: alpha added once to the denominator (a catalogued fault) and the
# log of a ratio written upside down, which divides by zero for an unseen id when alpha is 0
OUTSIDE_THE_CATALOGUE = {"hero_transformer/tokens.py": [
    ("    total = len(train_ids) + alpha * vocab_size\n", "    total = len(train_ids) + alpha\n"),
    ("        if count == 0:\n            return math.inf\n        loss -= math.log(count / total)\n",
     "        loss += math.log(total / count)\n"),
]}
ONE_ALPHA = "denominator_with_one_alpha"  # the catalogued fault the edit above builds on

needs_chapter_one = pytest.mark.skipif("ch01_tokens" not in SAMPLE_ROOTS,
                                       reason="ch01_tokens is not among HERO_TEST_ASSIGNMENTS")


def _check(kind, words, passed=False):
    return engine.Check(f"a {kind} check", passed, f"{words}（中文）", words, kind)


def test_the_most_specific_failed_check_leads_and_the_first_case_follows():
    item = engine.ItemResult("x", "exercise", "题", "title", 1.0)
    item.checks = [_check("values", "case a: the values differ"), _check("structure", "case b: raised KeyError"),
                   _check("values", "case c: the values differ"), _check("property", "rows must sum to 1"),
                   _check("property", "a second property"), _check("property", "a passed one", passed=True)]
    item.finish()
    assert item.feedback_en.splitlines() == ["rows must sum to 1", "case b: raised KeyError",
                                             "case a: the values differ"]
    assert item.feedback_zh.splitlines()[0] == "rows must sum to 1（中文）"
    # the generic line alone is the feedback when nothing more specific failed, as before
    plain = engine.ItemResult("x", "exercise", "题", "title", 1.0)
    plain.checks = [_check("values", "case a: the values differ"), _check("values", "case c: the values differ")]
    assert plain.finish().feedback_en == "case a: the values differ"
    # a named misconception comes before every check, and the first failing case says where it shows
    named = engine.ItemResult("x", "exercise", "题", "title", 1.0)
    named.checks = [_check("values", "case a: the values differ"), _check("property", "rows must sum to 1")]
    named.finish(("可能的误解：除以了最大值", "likely misconception: divided by the maximum"))
    assert named.feedback_en.splitlines() == ["likely misconception: divided by the maximum",
                                              "case a: the values differ"]
    with pytest.raises(ValueError):
        engine.Check("a check", False, "中文", "words", "hint")  # a kind the feedback would never show


def test_mismatch_says_how_specific_it_is():
    values = torch.tensor([1.0, 2.0])
    assert engine.mismatch(values + 1, values).kind == "values"
    assert engine.mismatch(values[:1], values).kind == "structure"
    assert engine.mismatch(values.double(), values).kind == "structure"
    assert engine.mismatch(values * float("nan"), values).kind == "structure"
    assert engine.mismatch([values], [values + 1]).kind == "values"  # said of item 0, as specific as it was
    assert engine.mismatch("raised KeyError", [values]).kind == "structure"
    assert engine.mismatch(values, values) is None


def test_a_case_says_what_its_inputs_are():
    in_sample = {lang: engine._case_inputs(EXERCISE, "in_sample", lang) for lang in ("zh", "en")}
    assert in_sample["en"] == "train: 8 ids [1, 1, 1, 1, 2, 2, 3, 5], eval: 8 ids [1, 1, 1, 1, 2, 2, 3, 5], " \
                              "vocab_size=8, alpha=0.0"
    assert in_sample["zh"].startswith("train: 8 个 id [1, 1, 1, 1, 2, 2, 3, 5], eval: 8 个 id")
    long_ids = engine._case_inputs(EXERCISE, "generated", "en")
    assert long_ids.startswith("train: 400 ids [") and ", …], eval: 120 ids [" in long_ids
    assert engine._case_inputs("encode", "known", "en").startswith("itos: 12 strings ['<unk>', ")
    assert ", text: 14 characters '山月" in engine._case_inputs("encode", "known", "en")
    assert ", text: 14 个字符 '山月" in engine._case_inputs("encode", "known", "zh")
    assert engine._case_inputs("layer_norm", "random", "en") == "x: shape [2, 3, 4], gamma: shape [4], beta: shape [4]"
    assert engine._case_inputs("layer_norm", "random", "zh") == "x: 形状 [2, 3, 4], gamma: 形状 [4], beta: 形状 [4]"
    assert engine._case_inputs("embed", "batch", "en") == "ids: ids of shape [2, 3], weight: shape [7, 4]"
    assert engine._case_inputs("embed", "batch", "zh") == "ids: 形状 [2, 3] 的 id, weight: 形状 [7, 4]"
    assert engine._case_inputs("embed", "float64", "en").endswith("weight: shape [7, 4] (float64)")




def _said_as(tensor, lang):
    """How a case's tensor must be said: ids (an integer tensor) by their count and values when 1-D,
    one id when 0-dim, their shape otherwise; any other tensor by its shape (its dtype after it)."""
    zh = lang == "zh"
    if tensor.is_floating_point() or tensor.dtype == torch.bool:
        return r"形状 \[" if zh else r"shape \["
    if tensor.dim() == 1:
        return r"\d+ 个 (\w+ )?id \[" if zh else r"\d+ (\w+ )?ids? \["
    if tensor.dim() == 0:
        return r"单个 (\w+ )?id \d" if zh else r"a single (\w+ )?id \d"
    return r"形状 \[[\d, ]*\] 的 (\w+ )?id" if zh else r"(\w+ )?ids of shape \["


@pytest.mark.parametrize("exercise", registry.all_exercises(), ids=lambda e: e.id)
def test_no_input_is_a_bare_bracket(exercise):
    """`key=[...]` is a literal list, `key: ...` says what the input is: no "train: [8]" that reads
    as a list holding 8, every tensor by its shape or as ids."""
    for name, case in engine.cases_of(exercise.id).items():
        for lang in ("zh", "en"):
            text = engine._case_inputs(exercise.id, name, lang)
            assert ": [" not in text and ": (" not in text, text
            for key, value in list(case.items())[:engine._SHOWN_INPUTS]:
                if isinstance(value, torch.Tensor):
                    assert re.match(_said_as(value, lang), text.split(f"{key}: ", 1)[1]), (key, text)


@pytest.fixture(scope="module")
def graded(tmp_path_factory, pool):
    """{name: report} of the chapter-1 exercise graded alone: the reference, the catalogued fault
    and the mistake outside the catalogue."""
    samples = SAMPLE_ROOTS["ch01_tokens"]
    root = tmp_path_factory.mktemp("best-line")
    outside = root / "outside_the_catalogue"
    shutil.copytree(samples / "reference", outside)
    apply_edits(outside, OUTSIDE_THE_CATALOGUE)
    folders = {"reference": samples / "reference", ONE_ALPHA: samples / ONE_ALPHA, "outside": outside}
    reports = engine.grade_many(list(folders.values()), CHAPTER.id, pool=pool, only=[[EXERCISE]] * len(folders))
    return dict(zip(folders, reports))


def _table_line(text, item_id):
    return next(line for line in text.splitlines() if line.startswith(item_id + " "))


def _details_lines(text):
    return [line.strip() for line in text.splitlines()[1:]]


@needs_chapter_one
def test_a_failed_property_leads_every_front_end(graded):
    item = graded["outside"].item(EXERCISE)
    assert item.status == "failed" and not item.misconception
    failed = [check for check in item.checks if not check.passed]
    prop = next(check for check in failed if not check.name.startswith("matches the reference"))
    assert failed[0] is not prop  # listed after the cases: it leads by its kind alone
    for lang, words in (("zh", prop.zh), ("en", prop.en)):
        shown = report.table(graded["outside"], lang, feedback_width=1000)
        assert _table_line(shown, EXERCISE).endswith(words), shown
        lines = _details_lines(report.details(graded["outside"], lang))
        assert lines[0] == words
        generic = "数值与参考实现不一致" if lang == "zh" else "the values differ from the reference"
        assert any(generic in line for line in lines[1:]), lines  # the first failing case, as context
        ids = "8 个 id [1, 1, 1, 1, 2, 2, 3, 5]" if lang == "zh" else "8 ids [1, 1, 1, 1, 2, 2, 3, 5]"
        assert ids in "\n".join(lines)  # the failing case's inputs say what they are
    assert nbgrader_glue.verdict_output(item)["evalue"].startswith(prop.zh)


@needs_chapter_one
def test_the_pytest_front_end_leads_with_it_too(graded, tmp_path):
    prop = next(c for c in graded["outside"].item(EXERCISE).checks
                if not c.passed and not c.name.startswith("matches the reference"))
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--hero-submission",
                           graded["outside"].submission, "--hero-assignment", CHAPTER.id, "--hero-lang", "en",
                           "-k", EXERCISE], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 1, done.stdout[-3000:]
    assert f"[failed] 0/3\n{prop.en}\n" in done.stdout, done.stdout[-3000:]


@needs_chapter_one
def test_the_reference_shows_no_failure_and_a_catalogued_fault_its_misconception(graded):
    reference = graded["reference"]
    assert [item.status for item in reference.items] == ["passed"]
    assert "✗" not in report.table(reference) and report.details(reference) == ""
    entry = next(e for e in CHAPTER.entries("fault") if e.id == ONE_ALPHA)
    item = graded[ONE_ALPHA].item(EXERCISE)
    assert item.misconception == ONE_ALPHA
    assert item.feedback_en.splitlines()[0] == "likely misconception: " + entry.en
    assert item.feedback_zh.splitlines()[0] == "可能的误解：" + entry.zh
    first_failed = next(check for check in item.checks if not check.passed)
    assert item.feedback_en.splitlines()[1:] == [first_failed.en]  # where it shows, and nothing else
    assert _table_line(report.table(graded[ONE_ALPHA], "en", feedback_width=1000), EXERCISE).endswith(
        "likely misconception: " + entry.en)


@needs_chapter_one
def test_no_line_gives_an_expected_value(graded):
    """The reference's value of every case the two wrong bodies fail, as feedback would write it,
    is nowhere in their reports."""
    expected = {name: value.item() for name, value in engine.reference_outputs(EXERCISE).items()
                if isinstance(value, torch.Tensor) and value.numel() == 1 and value.item() not in (0.0, float("inf"))}
    for name in ("outside", ONE_ALPHA):
        text = str(graded[name].to_json())
        item = graded[name].item(EXERCISE)
        failed = {check.name for check in item.checks if not check.passed}
        for case, value in expected.items():
            if f"matches the reference on case '{case}' (cpu)" in failed:
                leaked = [form for form in (f"{value:.4g}", f"{value:.3f}", f"{value:.4f}", repr(value)) if form in text]
                assert not leaked, (name, case, leaked)


# chapter 8: clipping moved before backward (outside the catalogue: it clips nothing, since the
# gradients were just set to None, and the step then uses the whole gradient)
CLIP_BEFORE_BACKWARD = {"hero_transformer/train.py": [(
    "    loss.backward()  # only once the loss is known to be finite\n"
    "    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)\n",
    "    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)\n"
    "    loss.backward()\n")]}


@pytest.mark.skipif("ch08_train_generate" not in SAMPLE_ROOTS, reason="ch08_train_generate is not among HERO_TEST_ASSIGNMENTS")
def test_clipping_before_backward_is_named_by_the_step_it_spoils(tmp_path, pool):
    """The step's gradients are clipped (a property every correct train_step keeps): the reference
    keeps it, and a body that clips before backward leads with it, not with "the values differ"."""
    samples = SAMPLE_ROOTS["ch08_train_generate"]
    wrong = tmp_path / "clip_before_backward"
    shutil.copytree(samples / "reference", wrong)
    apply_edits(wrong, CLIP_BEFORE_BACKWARD)
    reference, graded = engine.grade_many([samples / "reference", wrong], "ch08_train_generate", pool=pool,
                                          only=[["train_step"]] * 2)
    name = "optimizer.step() sees gradients clipped to max_grad_norm"
    kept = [c for c in reference.item("train_step").checks if c.name == name]
    assert len(kept) == 1 and kept[0].passed
    item = graded.item("train_step")
    assert item.status == "failed" and not item.misconception
    lead = _details_lines(report.details(graded, "en"))[0]
    assert lead.startswith("optimizer.step() used gradients of total norm") and "max_grad_norm = 0.1" in lead, lead
    assert "裁剪要在 backward 之后、step 之前" in _details_lines(report.details(graded, "zh"))[0]

"""Chapter 2 (ids to vectors): its answers worked out a second way, answers that must be earned
(no graded value is written in the student's notebook, a value copied from it earns nothing, a
known mistake is named without showing the answer), and what the chapter's probes and visible
checks promise."""

import ast
import math
import shutil
import subprocess
import sys

import pytest
import torch

from autograder import engine, registry, release

from conftest import SAMPLE_ROOTS

CHAPTER = registry.ASSIGNMENTS["ch02_embeddings"]
SAMPLES = SAMPLE_ROOTS.get(CHAPTER.id)
needs_samples = pytest.mark.skipif(SAMPLES is None, reason="HERO_TEST_ASSIGNMENTS leaves ch02_embeddings out")


# --- the answers, a second way ----------------------------------------------------------


def test_the_answers_are_what_their_questions_ask():
    """Each graded answer worked out in plain Python from the question's words."""
    approx = pytest.approx
    table = [(0.3, -1.2), (2.5, 0.4), (-0.7, 1.1), (1.8, -0.6), (-1.5, 2.2)]
    sequence = [4, 1, 4, 2, 0]
    mean = [sum(table[i][k] for i in sequence) / len(sequence) for k in range(2)]
    assert engine.expected_answer("mean_lookup") == approx(mean, abs=1e-12)
    assert mean == approx([-0.18, 0.94])

    ids = [[0, 3, 3], [1, 3, 4]]
    upstream = [[(0.5, -1.0), (2.0, 0.25), (-1.5, 1.0)], [(1.0, 1.0), (0.75, -2.0), (3.0, 0.5)]]
    row = [sum(upstream[b][t][k] for b in range(2) for t in range(3) if ids[b][t] == 3) for k in range(2)]
    assert engine.expected_answer("repeated_row_grad") == approx(row, abs=1e-12) == [1.25, -0.75]

    read = {5, 1, 0, 7, 3}
    assert engine.expected_answer("zero_grad_rows") == [r for r in range(8) if r not in read] == [2, 4, 6]

    V, C, d = 1200, 64, 128
    assert engine.expected_answer("embedding_head_params") == V * d + C * d + V * d == 315_392

    assert engine.expected_answer("init_row_norm") == approx(0.02 * math.sqrt(512), rel=1e-12)
    assert engine.expected_answer("one_hot_macs") == 8 * 64 * 1200 * 128 == 78_643_200


def test_the_row_norm_answer_is_what_a_drawn_table_shows():
    """sqrt(E||w||^2) = std * sqrt(d), checked on a drawn table rather than by the formula."""
    rows = torch.empty(4000, 512, dtype=torch.float64).normal_(0.0, 0.02, generator=torch.Generator().manual_seed(5))
    measured = rows.pow(2).sum(dim=1).mean().sqrt().item()
    assert measured == pytest.approx(engine.expected_answer("init_row_norm"), rel=0.01)


# --- answers must be earned ------------------------------------------------------------


def test_every_answer_has_a_known_mistake_and_ids_are_the_chapters_own():
    assert all(answer.mistakes for answer in CHAPTER.answers) and sum(len(answer.mistakes) for answer in CHAPTER.answers) >= 10
    others = {item.id for a in registry.ASSIGNMENTS.values() if a.id != CHAPTER.id for item in a.exercises + a.answers}
    assert not others & {item.id for item in CHAPTER.exercises + CHAPTER.answers}


@needs_samples
def test_the_walkthroughs_own_values_earn_nothing_through_the_grader(pool, tmp_path):
    """End to end: every answer cell holds the walkthrough's value for the same kind of question."""
    copied = {
        "mean_lookup": "mean_lookup = W[ids[0]].mean(dim=0).tolist()",
        "one_hot_macs": "one_hot_macs = 72",
        "embedding_head_params": "embedding_head_params = 4096 + 4096",
        "repeated_row_grad": "repeated_row_grad = [3.0, -1.0, 3.0]",
        "zero_grad_rows": "zero_grad_rows = [1]",
        "init_row_norm": "init_row_norm = 0.16",
    }
    assert set(copied) == {a.id for a in CHAPTER.answers}
    folder = tmp_path / "student"
    shutil.copytree(SAMPLES / "reference", folder)
    release.replace_answers(folder / CHAPTER.notebook_name, copied)
    report = engine.grade(folder, CHAPTER.id, pool=pool)
    assert {i.id: i.score for i in report.items if i.kind == "answer"} == {a: 0 for a in copied}
    assert all(i.score == i.max_score for i in report.items if i.kind == "exercise")


# --- the probes ---------------------------------------------------------------------------


def test_the_probes_import_only_torch_and_the_standard_library():
    tree = ast.parse(CHAPTER.probes_file.read_text(encoding="utf-8"))
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert imported <= {"torch"} | set(sys.stdlib_module_names)


def test_the_initialisation_routes_draw_identical_numbers():
    """The init probe compares values exactly: normal_, randn * std and nn.init.normal_ draw the
    same numbers from one generator seed (so any of them earns the marks)."""
    for dtype in (torch.float32, torch.float64):
        seeded = lambda: torch.Generator().manual_seed(16)  # noqa: E731
        a = torch.empty(256, 64, dtype=dtype).normal_(0.0, 0.02, generator=seeded())
        b = torch.randn(256, 64, dtype=dtype, generator=seeded()) * 0.02
        c = torch.nn.init.normal_(torch.empty(256, 64, dtype=dtype), 0.0, 0.02, generator=seeded())
        assert torch.equal(a, b) and torch.equal(a, c)


def test_the_init_probe_leaves_the_global_rng_alone():
    chapter_probes = CHAPTER.part("probes")
    reference = engine.reference_module("init_normal")
    cases = chapter_probes.make_cases("init_normal")
    torch.manual_seed(1234)
    expected = torch.rand(3)
    torch.manual_seed(1234)
    for name, case in cases.items():
        chapter_probes.run_case(reference, "init_normal", name, case, "cpu")
    assert torch.equal(torch.rand(3), expected)


def test_cases_separate_the_axes():
    """T, d and V differ in the cases, and a square table is there for the row/column mix-up."""
    cases = CHAPTER.part("probes").make_cases("embed")
    T, (V, d) = cases["batch"]["ids"].shape[1], cases["batch"]["weight"].shape
    assert len({T, V, d}) == 3
    assert cases["square"]["weight"].shape[0] == cases["square"]["weight"].shape[1]


def test_the_lookup_equals_the_one_hot_product_for_the_reference():
    embeddings = engine.reference_module("embed")
    weight = torch.randn(9, 5, generator=torch.Generator().manual_seed(3))
    ids = torch.randint(0, 9, (4, 6), generator=torch.Generator().manual_seed(4))
    assert torch.equal(embeddings.embed(ids, weight), embeddings.one_hot(ids, 9) @ weight)
    upstream = torch.randn(4, 6, 5, generator=torch.Generator().manual_seed(6))
    grad = embeddings.embedding_grad(ids, upstream, 9)
    assert torch.allclose(grad, embeddings.one_hot(ids, 9).reshape(-1, 9).T @ upstream.reshape(-1, 5))


# --- the visible checks --------------------------------------------------------------------


@needs_samples
def test_visible_checks_answer_a_stub_in_one_line_and_let_run_all_go_on():
    code = ("from hero_transformer import checks, embeddings_checks\n"
            "for name in ('check_one_hot', 'check_embed', 'check_embedding_grad', 'check_init_normal'):\n"
            "    getattr(embeddings_checks, name)()\n"
            "checks.answered('mean_lookup', ...)\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=SAMPLES / "stubs", capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    for exercise in ("one_hot", "embed", "embedding_grad", "init_normal"):
        assert f"尚未实现：练习 {exercise} 还是 raise NotImplementedError('{exercise}')" in done.stderr
        assert "hero_transformer/embeddings.py" in done.stderr
    assert "尚未作答" in done.stderr and "Traceback" not in done.stderr and "✓" not in done.stdout


@needs_samples
@pytest.mark.parametrize("fault", CHAPTER.entries("fault"), ids=lambda f: f.id)
def test_the_visible_check_of_a_faulty_exercise_does_not_pass(fault):
    """Every known misconception is already visible in the notebook: the check of its exercise
    fails (an AssertionError with the chapter's words, or the error the student's own code raised)
    and prints no pass line."""
    check = {"one_hot": "check_one_hot", "embed": "check_embed", "embedding_grad": "check_embedding_grad",
             "init_normal": "check_init_normal"}[fault.exercise]
    code = f"from hero_transformer import embeddings_checks\nembeddings_checks.{check}()\n"
    done = subprocess.run([sys.executable, "-c", code], cwd=SAMPLES / fault.sample, capture_output=True, text=True)
    assert done.returncode != 0 and "✓" not in done.stdout
    assert "AssertionError" in done.stderr or "/hero_transformer/embeddings.py" in done.stderr, done.stderr


@needs_samples
@pytest.mark.parametrize("variant", CHAPTER.entries("correct"), ids=lambda v: v.id)
def test_the_visible_check_passes_every_correct_variant(variant):
    check = {"one_hot": "check_one_hot", "embed": "check_embed", "embedding_grad": "check_embedding_grad",
             "init_normal": "check_init_normal"}[variant.exercise]
    code = f"from hero_transformer import embeddings_checks\nembeddings_checks.{check}()\n"
    done = subprocess.run([sys.executable, "-c", code], cwd=SAMPLES / variant.sample, capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.count("✓") == 1 and not done.stderr, done.stderr

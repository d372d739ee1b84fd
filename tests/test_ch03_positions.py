"""Chapter 3 (learned absolute positions): its answers worked out a second way, no graded value
written in the student's notebook or earned by copying one from it, each known mistake named,
and the chapter's own facts: the reference agrees with TransformerLM's rule, the visible checks
catch every known fault, and the student's notebook runs top to bottom on stubs."""

import math
import subprocess
import sys

import pytest
import torch

from autograder import engine, reference, registry

CHAPTER = registry.ASSIGNMENTS["ch03_positions"]
RELEASED = registry.REPO_ROOT / registry.RELEASE_DIR / CHAPTER.id / CHAPTER.notebook_name


# --- the answers, a second way ------------------------------------------------------------


def test_the_answers_are_what_their_questions_ask():
    """Each graded answer worked out in plain Python, from the question's words alone."""
    approx = pytest.approx
    assert engine.expected_answer("new_token_positions") == [13 + i for i in range(4)]

    table = [(0.3, -0.6), (1.1, 0.4), (-0.7, 0.9), (0.2, -1.3), (0.8, 0.5)]
    tokens = [[(0.6, 1.5), (-1.2, 0.7)], [(2.1, -0.25), (0.3, 0.6)]]
    by_hand = [[[a + b for a, b in zip(token, table[1 + t])] for t, token in enumerate(sequence)]
               for sequence in tokens]
    got = engine.expected_answer("cached_position_sum")
    assert isinstance(got, torch.Tensor) and got.shape == (2, 2, 2)
    assert torch.allclose(got, torch.tensor(by_hand, dtype=torch.float64), rtol=0, atol=1e-12)

    assert engine.expected_answer("position_table_params") == [48 * 24] * 3 == [1_152] * 3
    assert engine.expected_answer("untrained_rows") == [12, 13, 14, 15]
    assert engine.expected_answer("positions_left") == 640 - 457 == 183
    assert engine.expected_answer("sinusoid_value") == approx(math.cos(300 / 10000 ** (2 / 8)), abs=1e-6)
    assert engine.expected_answer("sinusoid_value") == approx(math.cos(30.0), abs=1e-6)
    assert engine.expected_answer("longest_wavelength") == approx(2 * math.pi * 10 ** 3.5, rel=1e-12)


# --- no graded value is written in the student's notebook, or earned by copying one ------------


def test_every_answer_has_a_known_mistake_and_the_ids_are_the_chapters_own():
    assert 5 <= len(CHAPTER.answers) <= 9 and all(answer.mistakes for answer in CHAPTER.answers)
    points = CHAPTER.points()
    assert all(points[answer.id] == 1 for answer in CHAPTER.answers)
    assert all(2 <= points[exercise.id] <= 3 for exercise in CHAPTER.exercises)


# --- the chapter's own facts -----------------------------------------------------------------


def test_the_reference_follows_the_models_rule():
    """positions.py and TransformerLM agree: the same rows as nn.Embedding at start, and a ValueError
    exactly when start + T exceeds block_size."""
    positions, model = reference.load("positions"), reference.load("model")
    torch.manual_seed(0)
    lm = model.TransformerLM(model.Config(vocab_size=7, block_size=6, d_model=4, n_heads=2, n_layers=1, d_ff=8,
                                          dropout=0.0))
    table = lm.position_embedding.weight.detach()
    x = torch.randn(2, 3, 4)
    for start in range(4):
        ids = positions.position_ids(3, 6, start=start)
        assert ids.dtype == torch.int64 and ids.tolist() == [start, start + 1, start + 2]
        looked_up = lm.position_embedding(ids).detach()
        assert torch.equal(positions.add_positions(x, table, start=start), x + looked_up)
    for start, length in ((4, 3), (0, 7), (6, 1)):
        with pytest.raises(ValueError):
            positions.position_ids(length, 6, start=start)
        with pytest.raises(ValueError):
            positions.add_positions(torch.zeros(1, length, 4), table, start=start)
    with pytest.raises(ValueError):
        lm(torch.zeros(1, 7, dtype=torch.long))
    assert positions.untrained_positions([64, 64], 256) == list(range(64, 256))
    assert positions.untrained_positions([3, 9], 6) == []


def test_every_known_fault_is_caught_by_its_visible_check_too():
    """A student who runs the visible check learns about each known misconception before submitting."""
    positions, judges = reference.load("positions"), reference.load("positions_checks")
    run = {"position_ids": judges.check_position_ids, "add_positions": judges.check_add_positions,
           "untrained_positions": judges.check_untrained_positions}
    missed = []
    for entry in CHAPTER.entries("fault"):
        saved = getattr(positions, entry.exercise)
        setattr(positions, entry.exercise, entry.function)
        try:
            run[entry.exercise]()
            missed.append(entry.id)
        except AssertionError:
            pass
        finally:
            setattr(positions, entry.exercise, saved)
    assert not missed, missed
    for entry in CHAPTER.entries("correct"):  # and a correct body written differently passes it
        saved = getattr(positions, entry.exercise)
        setattr(positions, entry.exercise, entry.function)
        try:
            run[entry.exercise]()
        finally:
            setattr(positions, entry.exercise, saved)


def test_visible_checks_answer_a_stub_in_one_line():
    code = ("from hero_transformer import checks, positions_checks\n"
            "for name in ('check_position_ids', 'check_add_positions', 'check_untrained_positions'):\n"
            "    getattr(positions_checks, name)()\n"
            "checks.answered('positions_left', ...)\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=RELEASED.parent, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    for exercise in ("position_ids", "add_positions", "untrained_positions"):
        assert f"尚未实现：练习 {exercise} 还是 raise NotImplementedError('{exercise}')" in done.stderr
    assert "hero_transformer/positions.py" in done.stderr
    assert "尚未作答" in done.stderr and "Traceback" not in done.stderr


def test_the_student_notebook_runs_on_stubs():
    """The walkthrough uses no exercise: Run All on the release, every stub and answer untouched,
    raises nothing and prints no pass line."""
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.read(str(RELEASED), as_version=4)
    NotebookClient(notebook, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(RELEASED.parent)}}).execute()
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    assert sum(o.text.count("✓") for o in outputs if o.output_type == "stream") == 0

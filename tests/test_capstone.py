"""Chapter 8's capstone (hero_transformer/poetry.py, `hero capstone`): the figures it reports mean
what they say, a prompt outside the vocabulary is an error that names it, and the command trains,
saves and writes.  The run itself (about 10 minutes) is measured by `hero capstone`, recorded in
docs/benchmarks.md; here it runs for a few steps on the committed poems."""

import subprocess
import sys

import pytest
import torch

from autograder import reference

poetry = reference.load("poetry")
tokens = reference.load("tokens")


def test_a_line_is_a_clause_ended_by_punctuation_and_the_poem_ends_at_its_newline():
    assert poetry.clauses("床前明月光，疑是地上霜。\n舉頭望明月，") == ["床前明月光", "疑是地上霜"]
    assert poetry.clauses("白日依山盡，黃河入") == ["白日依山盡"]  # the cut-off tail is not a line
    assert poetry.clauses("") == []


def test_the_share_counts_lines_of_five_or_seven_characters_only():
    share, lines = poetry.five_or_seven(["床前明月光，疑是地上霜。", "朝辭白帝彩雲間，千里江陵一日還。", "山高，水長。"])
    assert lines == 6 and share == pytest.approx(4 / 6)
    assert poetry.five_or_seven([]) == (0.0, 0)


def test_a_printed_poem_breaks_after_each_full_stop_and_marks_a_cut_tail():
    assert poetry.as_lines("床前明月光，疑是地上霜。舉頭望明月，低頭") == ["床前明月光，疑是地上霜。", "舉頭望明月，低頭…"]


def test_a_prompt_character_outside_the_vocabulary_is_an_error_that_names_it():
    coder = tokens.Tokenizer(tokens.build_vocab("春風明月山水", 10))
    assert poetry.prompt_ids(coder, "春風") == [coder.stoi["春"], coder.stoi["風"]]
    with pytest.raises(ValueError, match="风") as raised:
        poetry.prompt_ids(coder, "春风")
    assert "風" in str(raised.value) and "vocabulary" in str(raised.value)


def test_without_unk_never_writes_unk_even_where_the_model_prefers_it():
    coder = tokens.Tokenizer(tokens.build_vocab("春風明月，。\n", 10))
    lm = poetry.build(coder.vocab_size, dict(poetry.CAPSTONE, n_layers=1, d_model=8, n_heads=2, d_ff=16,
                                              block_size=12))
    with torch.no_grad():
        lm.head.weight.zero_()
        lm.head.weight[coder.unk_id] = 5.0  # <unk> the likeliest by far, at every position
    poems = poetry.write(lm, coder, ["春", "月"], temperature=0.0, top_k=None)
    assert all("<unk>" not in poem and len(poem) >= 1 for poem in poems)


def test_the_command_trains_saves_and_writes_from_the_saved_model(tmp_path):
    saved = tmp_path / "model.pt"
    hero = [sys.executable, "-m", "autograder.cli", "capstone", "--save", str(saved)]
    trained = subprocess.run(hero + ["--source", "fixture", "--steps", "3", "--samples", "1"], capture_output=True, text=True,
                             timeout=600)
    assert trained.returncode == 0, trained.stderr
    summary = trained.stdout.strip().splitlines()[-1]
    assert "held-out loss" in summary and "5- or 7-character lines" in summary and "corpus" in summary
    assert "trained 3/3 steps" in trained.stderr and saved.is_file()
    written = subprocess.run(hero + ["--write", "春月", "--temperature", "0"], capture_output=True, text=True,
                             timeout=120)
    assert written.returncode == 0 and written.stdout.count("\n\n") == 2, written.stderr
    assert written.stdout.startswith("春")
    outside = subprocess.run(hero + ["--write", "风"], capture_output=True, text=True, timeout=120)
    assert outside.returncode == 2 and "风" in outside.stderr


def test_writing_without_a_trained_model_says_how_to_get_one(tmp_path):
    done = subprocess.run([sys.executable, "-m", "autograder.cli", "capstone", "--save", str(tmp_path / "none.pt"),
                           "--write", "春"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "run `hero capstone` first" in done.stderr

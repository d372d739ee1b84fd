"""Chapter 8's own figures: the answers worked out a second way, none of them written in the
released notebook, every known mistake named; cached and uncached generation agree token for
token with the reference model; the loop stops on nan; the default settings beat the held-out
unigram baseline on the fixture."""

import json
import math

import pytest
import torch

from autograder import engine, probes, registry
from autograder.reference import load

ASSIGNMENT = registry.ASSIGNMENTS["ch08_train_generate"]
model = load("model")
train = load("train")


def _released_text():
    path = registry.REPO_ROOT / registry.RELEASE_DIR / ASSIGNMENT.id / ASSIGNMENT.notebook_name
    return "\n".join("".join(cell["source"]) for cell in json.loads(path.read_text(encoding="utf-8"))["cells"])


def _texts(value):
    """The ways a value could be written: numbers to 3-7 decimals, integers with and without separators."""
    if isinstance(value, (list, tuple)):
        return {text for item in value for text in _texts(item)}
    if isinstance(value, int):
        return {str(value), f"{value:,}"}
    return {f"{value:.{digits}f}" for digits in range(3, 8)}


def _judge(answer, value):
    body = {"values": {answer.variable: {"ok": probes.encode(value)}}, "cell_failures": []}
    return engine.judge_answer(answer, 1.0, {"status": "ok", "payload": {"body": body}, "output_tail": ""}, None)


# --- the answers, a second way --------------------------------------------------------------


def test_the_answers_worked_out_by_hand():
    expected = {answer.id: engine.expected_answer(answer.id) for answer in ASSIGNMENT.answers}
    assert expected["window_starts"] == 5000 - 48
    assert expected["eval_tokens"] == (2048 - 1) // 64 * 64
    p = (400 - 100) / (1000 - 100)  # a third of the way: cos(pi/3) = 1/2
    assert expected["cosine_lr"] == pytest.approx(0.1 + 0.45 * 1.5) == pytest.approx(0.1 + 0.45 * (1 + math.cos(math.pi * p)))
    norm = math.sqrt(4 + 1 + 16 + 4 + 16)
    assert expected["clipped_grad"] == pytest.approx([2 * 2 / (norm + 1e-6), -2 / (norm + 1e-6)])
    scaled = [6.0, 2.0, 4.0, 2.0, 0.0]  # logits / 0.5; the third largest, 2, is tied: four kept
    weights = [math.exp(v) if v >= 2.0 else 0.0 for v in scaled]
    assert expected["topk_probs"] == pytest.approx([w / sum(weights) for w in weights])
    assert expected["uncached_positions"] == sum(16 + t for t in range(48)) == 48 * 16 + 48 * 47 // 2
    V, N, d, f = 300, 3, 48, 192
    assert expected["decay_count"] == N * (4 * d * d + 2 * d * f) + V * d


@pytest.mark.parametrize("answer", ASSIGNMENT.answers, ids=lambda a: a.id)
def test_no_expected_value_is_in_the_released_notebook(answer):
    text = _released_text()
    found = sorted(t for t in _texts(engine.expected_answer(answer.id)) if t in text)
    assert not found, f"{answer.id}: the released notebook shows {found}"


@pytest.mark.parametrize("answer", ASSIGNMENT.answers, ids=lambda a: a.id)
def test_each_mistake_differs_and_is_named(answer):
    assert 1 <= len(answer.mistakes) <= 3
    for mistake, value in zip(answer.mistakes, engine.mistake_values(answer.id)):
        assert engine._answer_problem(answer, value, engine.expected_answer(answer.id)) is not None
        result = _judge(answer, value)
        assert result.status == "failed"
        assert mistake.zh in result.feedback_zh and mistake.en in result.feedback_en
    assert _judge(answer, engine.expected_answer(answer.id)).status == "passed"


# --- generation with the reference model ----------------------------------------------------


def _lm(block_size=80):
    cfg = model.Config(vocab_size=37, block_size=block_size, d_model=32, n_heads=4, n_layers=2, d_ff=64, dropout=0.0)
    return model.init_weights(model.TransformerLM(cfg), generator=torch.Generator().manual_seed(8))


def test_cached_and_uncached_greedy_generation_are_identical_token_for_token_for_64_tokens():
    lm = _lm()
    prompt = torch.tensor([[3, 1, 4, 1, 5], [9, 2, 6, 5, 3]])
    cached = train.generate(lm, prompt, 64, temperature=0.0, use_cache=True)
    uncached = train.generate(lm, prompt, 64, temperature=0.0, use_cache=False)
    assert cached.shape == (2, 5 + 64) and cached.dtype == torch.int64
    assert torch.equal(cached, uncached)
    assert torch.equal(cached[:, :5], prompt)


def test_cached_and_uncached_sampling_agree_with_the_same_generator_seed():
    lm = _lm()
    prompt = torch.tensor([[7, 7, 0], [1, 2, 3]])
    runs = [train.generate(lm, prompt, 64, temperature=0.9, top_k=10, use_cache=flag,
                           generator=torch.Generator().manual_seed(123)) for flag in (True, False)]
    assert torch.equal(*runs)
    other = train.generate(lm, prompt, 64, temperature=0.9, top_k=10, generator=torch.Generator().manual_seed(124))
    assert not torch.equal(runs[0], other)  # the seed matters: the agreement is not an accident of greedy decoding


def test_generation_past_block_size_is_refused_and_the_mode_restored():
    lm = _lm(block_size=10).train()
    with pytest.raises(ValueError, match="block_size"):
        train.generate(lm, torch.zeros(1, 4, dtype=torch.int64), 7)
    assert lm.training
    out = train.generate(lm, torch.zeros(1, 4, dtype=torch.int64), 6, temperature=0.0)
    assert out.shape == (1, 10) and lm.training


# --- the loop ---------------------------------------------------------------------------------


def test_parameter_groups_of_the_model_decay_exactly_its_linear_weights():
    lm = _lm()
    decay, rest = train.parameter_groups(lm, 0.1)
    assert decay["weight_decay"] == 0.1 and rest["weight_decay"] == 0.0
    suffixes = ("attention.qkv.weight", "attention.proj.weight", "feedforward.fc1.weight", "feedforward.fc2.weight")
    assert decay["names"] == [n for n, _ in lm.named_parameters() if n.endswith(suffixes) or n == "head.weight"]
    assert "token_embedding.weight" in rest["names"] and "position_embedding.weight" in rest["names"]
    assert len(decay["params"]) + len(rest["params"]) == len(list(lm.parameters()))


def test_the_walkthrough_schedule_figures():
    settings = dict(max_lr=3e-3, min_lr=3e-4, warmup_steps=100, total_steps=600)
    figures = {0: 3e-5, 99: 3e-3, 100: 3e-3, 350: 1.65e-3, 600: 3e-4, 900: 3e-4}
    for step, value in figures.items():
        assert train.lr_at(step, **settings) == pytest.approx(value, rel=1e-12)


def test_train_stops_on_a_nan_loss_with_its_message(capsys):
    lm = _lm()
    with torch.no_grad():
        lm.head.weight[0, 0] = float("nan")
    data = torch.randint(0, 37, (400,), generator=torch.Generator().manual_seed(0))
    history = train.train(lm, data, data, steps=5, batch_size=2, block_size=8, max_lr=1e-3, min_lr=1e-4,
                          warmup_steps=1, weight_decay=0.1, eval_every=2, seed=0, progress=False)
    assert history["stopped"] and "nan" in history["stopped"] and history["loss"] == []
    assert "stopped" in capsys.readouterr().out
    assert not train.running_in_grader()


def test_the_default_settings_beat_the_held_out_unigram_baseline_on_the_fixture():
    """The notebook's section 8 with the fixture (the full corpus is checked by running the
    notebook where it is cached): the same settings, the same assertion."""
    corpus, tokens = load("corpus"), load("tokens")
    poems = corpus.load_poems("fixture")
    train_poems, heldout_poems = corpus.split_poems(poems)
    coder = tokens.Tokenizer(tokens.build_vocab(corpus.corpus_text(train_poems), 1200))
    train_ids = torch.tensor(coder.encode(corpus.corpus_text(train_poems)))
    heldout_ids = torch.tensor(coder.encode(corpus.corpus_text(heldout_poems)))
    unigram = tokens.unigram_cross_entropy(train_ids.tolist(), heldout_ids.tolist(), coder.vocab_size, alpha=1.0)
    steps = min(300, 12 * len(train_ids) // (32 * 64))
    cfg = model.Config(coder.vocab_size, 64, 128, 4, 2, 256, 0.0)
    lm = model.init_weights(model.TransformerLM(cfg), generator=torch.Generator().manual_seed(0))
    history = train.train(lm, train_ids, heldout_ids, steps=steps, batch_size=32, block_size=64, max_lr=3e-3,
                          min_lr=3e-4, warmup_steps=min(100, steps // 5), weight_decay=0.1, eval_every=50, seed=0,
                          progress=False)
    assert history["val_loss"][-1] < unigram < math.log(1200)

"""Chapter 8's capstone: a longer run of the chapter's training that writes Tang-style poems, and
the figures that say how well it writes.

Given code, not an exercise.  The notebook's optional capstone cells run it with your
hero_transformer/train.py (it calls `train.train` and `train.generate`, which call your
functions); `hero capstone` runs the same thing with the reference.  Its settings, `CAPSTONE`,
were chosen by measurement on the project's 2-core machine (docs/benchmarks.md, "Capstone").

How well it writes is measured two ways a student can read:

- the held-out loss against the unigram baseline (chapter 1): below it, the model knows more
  than which characters are frequent;
- the share of written lines of 5 or 7 characters (五言、七言), against the same share in the
  corpus itself.  A "line" is a clause ended by a punctuation mark (，。？！；); the unfinished
  tail of a poem cut off by the length limit is not a line.
"""

import contextlib
import copy
import math
import time

import torch
from torch import nn

from . import corpus, model, tokens, train

# The capstone run.  On the project's idle 2-core machine a step of this model takes 0.13 s with 2 threads,
# so 2,000 steps take about 4 minutes (docs/benchmarks.md, "Training times"); `seconds_per_step`
# measures it on the machine at hand before a run starts.
CAPSTONE = {
    "n_layers": 4, "d_model": 128, "n_heads": 4, "d_ff": 512, "block_size": 64, "dropout": 0.0,
    "steps": 2000, "batch_size": 32, "max_lr": 3e-3, "min_lr": 3e-4, "warmup_steps": 100,
    "weight_decay": 0.1, "max_grad_norm": 1.0, "eval_every": 250, "seed": 0, "threads": 2,
}

PUNCTUATION = "，。？！；"
LINE_ENDS = "。？！"  # where a printed poem starts a new line
PROMPTS = "春秋月山江風"  # traditional characters: the corpus's vocabulary is traditional (風, not 风)


def clauses(text):
    """The complete lines of the first poem in `text`: clauses ended by a punctuation mark, up to
    the first newline (a poem's end).  An unfinished tail is left out."""
    found, current = [], ""
    for char in text:
        if char == "\n":
            break
        if char in PUNCTUATION:
            found.append(current)
            current = ""
        else:
            current += char
    return found


def five_or_seven(texts):
    """(share, lines): the share of the complete lines of `texts` that have 5 or 7 characters."""
    lengths = [len(line) for text in texts for line in clauses(text)]
    if not lengths:
        return 0.0, 0
    return sum(length in (5, 7) for length in lengths) / len(lengths), len(lengths)


def prompt_ids(coder, prompt):
    """The ids of `prompt`'s characters; a character the vocabulary does not hold is an error that
    names it (the model has never seen it: there is nothing to continue from)."""
    missing = [char for char in prompt if char not in coder.stoi]
    if missing:
        shown = "、".join(dict.fromkeys(missing))
        raise ValueError(f"提示里的 {shown} 不在字表里（字表来自训练语料，是繁体字：例如 風 而不是 风）"
                         f"\n(the prompt's {', '.join(dict.fromkeys(missing))} is not in the vocabulary, which is built "
                         f"from the training poems, in traditional characters: 風, not 风)")
    return [coder.stoi[char] for char in prompt]


def poem_start(coder):
    """The ids a written poem starts from: a newline, which in the corpus ends the poem before, so
    the model knows that a poem begins here (a prompt at position 0 alone reads as any character
    in the middle of any line, and the likeliest continuation of one is often 。)."""
    return [coder.stoi["\n"]] if "\n" in coder.stoi else []


class WithoutUnk(nn.Module):
    """The model, except that <unk> is never the next token: its logit becomes -inf, so greedy
    decoding never picks it and sampling gives it probability 0.  The weights are untouched."""

    def __init__(self, inner, unk_id):
        super().__init__()
        self.inner, self.cfg, self.unk_id = inner, inner.cfg, unk_id

    def forward(self, idx, targets=None, past_key_values=None, use_cache=False):
        out = self.inner(idx, targets, past_key_values, use_cache)
        banned = out.logits.index_fill(-1, torch.tensor([self.unk_id], device=out.logits.device), float("-inf"))
        return out._replace(logits=banned)


def write(lm, coder, prompts, *, temperature=0.8, top_k=20, seed=0, max_new_tokens=None):
    """One poem per prompt (each a string of vocabulary characters), written by `lm` through
    train.generate with <unk> forbidden, after `poem_start`; each poem (the prompt and what
    follows) ends at its first newline or at block_size."""
    start = poem_start(coder)
    rows = [start + prompt_ids(coder, prompt) for prompt in prompts]
    if len({len(row) for row in rows}) != 1:
        raise ValueError("提示要一样长 (the prompts must have the same length)")
    idx = torch.tensor(rows, dtype=torch.int64, device=next(lm.parameters()).device)
    new = lm.cfg.block_size - idx.shape[1] if max_new_tokens is None else max_new_tokens
    generator = torch.Generator(device=idx.device).manual_seed(seed)
    out = train.generate(WithoutUnk(lm, coder.unk_id), idx, new, temperature=temperature, top_k=top_k,
                         generator=generator)
    return [coder.decode(row[len(start):]).split("\n")[0] for row in out.tolist()]


def as_lines(poem):
    """A poem as it is printed: a new line after each 。？！."""
    lines, current = [], ""
    for char in poem:
        current += char
        if char in LINE_ENDS:
            lines.append(current)
            current = ""
    return lines + ([current + "…"] if current else [])


def with_steps(steps, settings=CAPSTONE):
    """The capstone's settings for a run of `steps` (a shorter trial): warmup at most half the run."""
    return dict(settings, steps=steps, warmup_steps=min(settings["warmup_steps"], steps // 2),
                eval_every=min(settings["eval_every"], steps))


def prepare(source="full", limit=corpus.SEED_003["poems"], vocab_size=corpus.SEED_003["vocab_size"]):
    """The chapter's data: poems split into train and held-out, a vocabulary of the training part,
    both parts encoded, and the two baselines."""
    poems = corpus.load_poems(source, limit=limit)
    train_poems, heldout_poems = corpus.split_poems(poems)
    coder = tokens.Tokenizer(tokens.build_vocab(corpus.corpus_text(train_poems), vocab_size))
    train_ids = torch.tensor(coder.encode(corpus.corpus_text(train_poems)), dtype=torch.int64)
    heldout_ids = torch.tensor(coder.encode(corpus.corpus_text(heldout_poems)), dtype=torch.int64)
    return {"coder": coder, "train_poems": train_poems, "heldout_poems": heldout_poems,
            "train_ids": train_ids, "heldout_ids": heldout_ids,
            "uniform": tokens.uniform_cross_entropy(coder.vocab_size),
            "unigram": tokens.unigram_cross_entropy(train_ids.tolist(), heldout_ids.tolist(), coder.vocab_size),
            "corpus_share": five_or_seven(corpus.poem_text(poem) for poem in heldout_poems)[0]}


def build(vocab_size, settings=CAPSTONE):
    cfg = model.Config(vocab_size=vocab_size, block_size=settings["block_size"], d_model=settings["d_model"],
                       n_heads=settings["n_heads"], n_layers=settings["n_layers"], d_ff=settings["d_ff"],
                       dropout=settings["dropout"])
    return model.init_weights(model.TransformerLM(cfg), generator=torch.Generator().manual_seed(settings["seed"]))


def seconds_per_step(lm, train_ids, batch_size, block_size, threads, steps=5):
    """How long one training step of `lm` takes here: `steps` steps (after one to warm up) of
    get_batch and train_step on a copy of it, with `threads` threads.  The model is untouched."""
    trial = copy.deepcopy(lm)
    optimizer = torch.optim.AdamW(train.parameter_groups(trial, 0.1), lr=1e-4, betas=(0.9, 0.95))
    generator = torch.Generator().manual_seed(0)
    with torch_threads(threads):
        for step in range(steps + 1):
            if step == 1:
                began = time.perf_counter()
            inputs, targets = train.get_batch(train_ids, block_size, batch_size, generator)
            train.train_step(trial, optimizer, inputs, targets, 1e-4)
    return (time.perf_counter() - began) / steps


@contextlib.contextmanager
def torch_threads(threads):
    """Run the block with `threads` torch threads, then give the caller's number back."""
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def estimated_minutes(data, settings=CAPSTONE):
    """The capstone's training time on this machine, from a few measured steps."""
    lm = build(data["coder"].vocab_size, settings)
    per_step = seconds_per_step(lm, data["train_ids"], settings["batch_size"], settings["block_size"],
                                settings["threads"])
    return per_step * settings["steps"] / 60


def run(data, settings=CAPSTONE, samples=8, progress=True, log=print):
    """Train the capstone model on `data` (from `prepare`) and measure it; returns
    {"model", "history", "poems", "share", "lines", "write_seconds"} (`measure` gives the last four)."""
    lm = build(data["coder"].vocab_size, settings)
    with torch_threads(settings["threads"]):
        history = train.train(lm, data["train_ids"], data["heldout_ids"], steps=settings["steps"],
                              batch_size=settings["batch_size"], block_size=settings["block_size"],
                              max_lr=settings["max_lr"], min_lr=settings["min_lr"],
                              warmup_steps=settings["warmup_steps"], weight_decay=settings["weight_decay"],
                              max_grad_norm=settings["max_grad_norm"], eval_every=settings["eval_every"],
                              seed=settings["seed"], progress=progress, log=log)
    return {"model": lm, "history": history, **measure(lm, data, samples=samples)}


def measure(lm, data, prompts=PROMPTS, samples=8, temperature=0.8, top_k=20):
    """The written figures: `samples` poems per prompt character, the share of their lines of 5 or
    7 characters and how many lines that share is over."""
    began = time.perf_counter()
    poems = []
    for sample in range(samples):
        poems += write(lm, data["coder"], list(prompts), temperature=temperature, top_k=top_k, seed=sample)
    share, lines = five_or_seven(poems)
    return {"poems": poems, "share": share, "lines": lines, "write_seconds": time.perf_counter() - began}


def summary(result, data):
    """One line of figures, in English (the notebook prints its own Chinese line)."""
    final = result["history"]["val_loss"][-1] if result["history"]["val_loss"] else math.nan
    return (f"held-out loss {final:.3f} (unigram {data['unigram']:.3f}, uniform {data['uniform']:.3f}); "
            f"5- or 7-character lines {result['share']:.1%} of {result['lines']} written "
            f"(corpus {data['corpus_share']:.1%}, target >= {0.8 * data['corpus_share']:.1%}); "
            f"trained in {result['history']['seconds'] / 60:.1f} min")


def save(path, lm, coder, settings=CAPSTONE):
    """The trained model, its vocabulary and settings, for `load` (and `hero capstone --write`)."""
    from pathlib import Path

    Path(path).parent.mkdir(parents=True, exist_ok=True)
    torch.save({"settings": dict(settings), "itos": list(coder.itos), "state_dict": lm.state_dict()}, path)


def load(path):
    """(model in eval mode, tokenizer) from a file written by `save`."""
    saved = torch.load(path, map_location="cpu", weights_only=True)
    coder = tokens.Tokenizer(saved["itos"])
    lm = build(coder.vocab_size, saved["settings"])
    lm.load_state_dict(saved["state_dict"])
    return lm.eval(), coder

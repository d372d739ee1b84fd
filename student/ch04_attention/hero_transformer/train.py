"""Chapter 8: training the model and letting it write.

The parts of a training loop, each small enough to test alone: batches of windows from one long
id stream (`get_batch`), AdamW parameter groups that decay only the weight matrices of linear
layers (`parameter_groups`), linear warmup then cosine decay (`lr_at`), one optimiser step with a
stop on a non-finite loss and gradient clipping (`train_step`), the held-out loss per token
(`evaluate`), and sampling (`next_token_probs`, `generate`, with or without the KV cache).
`train` (given, not an exercise) puts them together with a progress bar.

Exercise bodies are fenced with nbgrader's solution markers; each chapter's student release
replaces them with ``raise NotImplementedError('<id>')``.
"""

import math
import os
import time

import torch
import torch.nn.functional as F  # noqa: F401  (exercise bodies may use it)
from torch import nn


def get_batch(data, block_size, batch_size, generator=None):
    """A random batch of training windows from one long 1-D int64 id stream `data`.

    starts = torch.randint(len(data) - block_size, (batch_size,), generator=generator), one draw
    per row, in that order; row b of x is data[s : s + block_size] and row b of y is
    data[s + 1 : s + block_size + 1] for s = starts[b] (y is x shifted by one: the next token at
    every position).  Returns (x, y), each [batch_size, block_size] int64 on data's device.
    """
    # 练习 get_batch：随机取一批训练窗口（见本章 notebook）
    raise NotImplementedError('get_batch')


def parameter_groups(model, weight_decay):
    """AdamW's two parameter groups for `model`:

    [{"params": [...], "names": [...], "weight_decay": weight_decay},
     {"params": [...], "names": [...], "weight_decay": 0.0}]

    The first holds the weight matrix of every nn.Linear layer (qkv, proj, fc1, fc2, head), the
    second every other trainable parameter: biases, LayerNorm gamma and beta, and the token and
    position embedding tables.  Trainable parameters only (requires_grad), each once, in
    model.named_parameters() order; "names" lists their names in the same order as "params".
    """
    # 练习 parameter_groups：AdamW 的两个参数组（哪些衰减）（见本章 notebook）
    raise NotImplementedError('parameter_groups')


def lr_at(step, *, max_lr, min_lr, warmup_steps, total_steps):
    """The learning rate of optimiser step `step` (counted from 0), a pure function (a Python float).

    Linear warmup for step < warmup_steps: max_lr * (step + 1) / warmup_steps.  Then cosine decay
    from max_lr to min_lr: progress = (step - warmup_steps) / max(1, total_steps - warmup_steps),
    clipped to [0, 1], lr = min_lr + 0.5 * (max_lr - min_lr) * (1 + cos(pi * progress)); so
    max_lr at step warmup_steps and min_lr from step max(total_steps, warmup_steps + 1) on.
    ValueError for step < 0 or warmup_steps > total_steps.
    """
    # 练习 lr_at：warmup 加余弦衰减的学习率（见本章 notebook）
    raise NotImplementedError('lr_at')


def train_step(model, optimizer, inputs, targets, lr, max_grad_norm=1.0):
    """One optimiser step; returns (loss, grad_norm) as Python floats.

    In order: set "lr" of every param group to `lr`; the optimiser's zero_grad with
    set_to_none=True; the loss, model(inputs, targets).loss; if it is not finite, raise
    FloatingPointError whose message (Chinese and English) gives the value, before any backward
    pass or step, so no parameter changes; the backward pass; grad_norm =
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm), the total norm before
    clipping; the optimiser's step.
    """
    # 练习 train_step：一步训练：nan 即停、梯度裁剪（见本章 notebook）
    raise NotImplementedError('train_step')


def evaluate(model, data, block_size, batch_size):
    """Mean cross entropy per token (nats) of `model` on the 1-D id stream `data`.

    The windows do not overlap: window i (i in range((len(data) - 1) // block_size)) has inputs
    data[i*T : i*T + T] and targets data[i*T + 1 : i*T + T + 1], T = block_size.  They go to the
    model in order, batch_size windows at a time (the last batch may be smaller), and the batch
    losses are averaged weighted by their token counts.  Runs under torch.no_grad() in eval mode
    and restores the model's previous training mode.
    """
    # 练习 evaluate：留出集上的每词元交叉熵（见本章 notebook）
    raise NotImplementedError('evaluate')


def next_token_probs(logits, temperature=1.0, top_k=None):
    """[B, V] logits of the last position -> [B, V] next-token probabilities.

    temperature == 0: one-hot at the argmax (torch.argmax's choice among ties).  Otherwise the
    logits are divided by `temperature`; with `top_k`, entries below the k-th largest value get
    probability exactly 0 (entries equal to it are kept, so ties can keep more than k; top_k >= V
    keeps everything); then softmax over the last axis.  ValueError for temperature < 0 or
    top_k < 1.
    """
    # 练习 next_token_probs：温度与 top-k 下的下一词元分布（见本章 notebook）
    raise NotImplementedError('next_token_probs')


def generate(model, idx, max_new_tokens, temperature=1.0, top_k=None, use_cache=True, generator=None):
    """Extend the prompts `idx` [B, T0] by `max_new_tokens` tokens -> [B, T0 + max_new_tokens].

    ValueError when T0 + max_new_tokens > model.cfg.block_size (learned positions stop there).
    Runs in eval mode under torch.no_grad() and restores the model's training mode.  With
    use_cache, the first call runs the whole prompt, model(idx, use_cache=True), and each later
    call feeds only the newest token with the cache, model(last, past_key_values=past,
    use_cache=True); without it every step runs the whole sequence so far, model(idx).  The next
    token comes from the last position's logits: their argmax when temperature == 0 (greedy:
    no random number is drawn, so the generator is left as it was), else
    torch.multinomial(next_token_probs(logits, temperature, top_k), 1, generator=generator)
    (next_token_probs called by that name).
    """
    # 练习 generate：逐词元生成（带或不带 KV 缓存）（见本章 notebook）
    raise NotImplementedError('generate')


# --- given: the loop --------------------------------------------------------------------


def running_in_grader():
    """True while the autograder runs this notebook's cells: its worker sets HERO_GRADING=1 for
    them (autograder/worker.py).  The chapter notebook's training cells skip themselves there:
    the grader grades the exercises and the answers, never trained weights, and gives each
    notebook cell a few seconds only."""
    return os.environ.get("HERO_GRADING") == "1"


def _progress_bar(total, shown):
    """tqdm's bar with ETA: a widget in Jupyter when ipywidgets is installed, text elsewhere."""
    try:
        from tqdm.auto import tqdm
    except ImportError:  # tqdm is a dependency of the course; without it, no bar
        return None
    return tqdm(total=total, desc="train", unit="step", disable=not shown, dynamic_ncols=True)


def train(model, train_data, val_data, *, steps, batch_size, block_size, max_lr, min_lr, warmup_steps,
          weight_decay, max_grad_norm=1.0, eval_every, seed, progress=True, on_step=None, log=print):
    """Train `model` (any module whose forward(inputs, targets) returns an object with `.loss`) on
    the 1-D id stream `train_data` for `steps` optimiser steps: AdamW over parameter_groups(model,
    weight_decay) with betas (0.9, 0.95), lr_at's schedule (warmup_steps, then cosine down to
    min_lr at `steps`), batches from get_batch with a generator seeded by `seed`, train_step with
    clipping at max_grad_norm.  Every `eval_every` steps, and after the last, the held-out loss
    evaluate(model, val_data, block_size, batch_size).  A FloatingPointError from train_step stops
    the run with its message.  A progress bar with ETA while it runs (progress=False: none), one
    summary line at the end, through `log`.  `on_step(step, loss)`, when given, is called after
    every step (the labs drive one bar over a whole grid of runs with it).

    Returns the history: {"steps", "loss", "lr", "grad_norm"} per step, {"eval_steps",
    "val_loss"} per evaluation (the step count reached when it was taken), "seconds" and
    "stopped" (None, or the message that stopped it)."""
    device = next(model.parameters()).device
    train_data, val_data = train_data.to(device), val_data.to(device)
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.AdamW(parameter_groups(model, weight_decay), lr=max_lr, betas=(0.9, 0.95))
    history = {"steps": [], "loss": [], "lr": [], "grad_norm": [], "eval_steps": [], "val_loss": [],
               "seconds": 0.0, "stopped": None}
    bar = _progress_bar(steps, progress)
    start = time.perf_counter()
    model.train()
    try:
        for step in range(steps):
            lr = lr_at(step, max_lr=max_lr, min_lr=min_lr, warmup_steps=warmup_steps, total_steps=steps)
            inputs, targets = get_batch(train_data, block_size, batch_size, generator)
            try:
                loss, grad_norm = train_step(model, optimizer, inputs, targets, lr, max_grad_norm)
            except FloatingPointError as exc:
                history["stopped"] = f"step {step}: {exc}"
                log(f"训练在第 {step} 步停止 (stopped at step {step}):\n{exc}")
                break
            for key, value in (("steps", step), ("loss", loss), ("lr", lr), ("grad_norm", grad_norm)):
                history[key].append(value)
            if (step + 1) % eval_every == 0 or step + 1 == steps:
                history["eval_steps"].append(step + 1)
                history["val_loss"].append(evaluate(model, val_data, block_size, batch_size))
            if on_step is not None:
                on_step(step, loss)
            if bar is not None:
                bar.update(1)
                shown = {"loss": f"{loss:.3f}", "lr": f"{lr:.2e}"}
                if history["val_loss"]:
                    shown["held-out"] = f"{history['val_loss'][-1]:.3f}"
                bar.set_postfix(shown, refresh=False)
    finally:
        if bar is not None:
            bar.close()
        history["seconds"] = time.perf_counter() - start
    done = len(history["loss"])
    last_val = f"{history['val_loss'][-1]:.3f}" if history["val_loss"] else "-"
    last_loss = f"{history['loss'][-1]:.3f}" if history["loss"] else "-"
    log(f"trained {done}/{steps} steps in {history['seconds']:.1f} s: last train loss {last_loss}, "
        f"held-out loss {last_val}" + (" (stopped early)" if history["stopped"] else ""))
    return history

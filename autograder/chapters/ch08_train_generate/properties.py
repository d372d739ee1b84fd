"""Checks that hold for any correct chapter-8 implementation, judged on the student's CPU
outputs with the visible checks' own judges (hero_transformer/train_checks.py): one check, two
front ends.  Windows shifted by one, the decay rule, the schedule's shape, the stop on a
non-finite loss (before backward), the training mode restored, probabilities, top-k support,
prompt kept, cached generation equal to uncached, sampling with the generator passed in, and
the step taken with clipped gradients.  The last two and the backward order have no visible check
of their own: their words are written here.

`check(exercise_id, outputs, cases, reference, judges)` returns (name, problem) pairs; the
engine passes checks.py as `judges`, and this chapter loads its own judges module.
"""

import torch

from autograder.reference import load

from . import probes


def _fields(value):
    """A probe's (label, value) pairs as a dict; anything else (a tensor, an error string) as it is."""
    if isinstance(value, tuple) and value and all(isinstance(item, tuple) and len(item) == 2
                                                  and isinstance(item[0], str) for item in value):
        return dict(value)
    return value


def _one_randint(calls):
    if calls == 1:
        return None
    return (f"get_batch 应当只调用一次 torch.randint，一次抽出全部 batch_size 个起点；你的代码调用了 {calls} 次。",
            f"get_batch must call torch.randint once, drawing all batch_size starts in one call; yours called it "
            f"{calls} times.")


def check(exercise_id, out, cases, reference, judges):
    judges = load("train_checks")
    out = {name: _fields(value) for name, value in out.items()}
    found = []
    if exercise_id == "get_batch":
        for name in ("seeded", "last_window"):
            got, case = out.get(name), cases[name]
            if isinstance(got, dict) and "x" in got and "y" in got:
                found.append((f"x and y are shifted windows of the data ({name})",
                              judges.judge_batch(case["data"], case["block_size"], case["batch_size"], got["x"], got["y"])))
            if isinstance(got, dict) and isinstance(got.get("randint_calls"), int):
                found.append((f"draws every start with one torch.randint call ({name})", _one_randint(got["randint_calls"])))
    if exercise_id == "parameter_groups":
        for name, case in cases.items():
            got = out.get(name)
            if isinstance(got, dict) and {"count", "decay", "no_decay"} <= set(got) and got["count"] == 2:
                net = probes.NamedLikeLM(odd=case["odd"], shared=case.get("shared", False))
                trainable = [n for n, p in net.named_parameters() if p.requires_grad]
                linear = {f"{n}.weight" for n, m in net.named_modules() if isinstance(m, torch.nn.Linear)}
                found.append((f"only linear weights decay ({name})",
                              judges.judge_groups(got, trainable, linear, case["weight_decay"])))
    if exercise_id == "lr_at":
        got, case = out.get("chapter"), cases["chapter"]
        if isinstance(got, dict) and isinstance(got.get("lr"), torch.Tensor) and got.get("python_floats"):
            settings = {k: case[k] for k in ("max_lr", "min_lr", "warmup_steps", "total_steps")}
            found.append(("warmup, then a non-increasing decay to min_lr",
                          judges.judge_schedule(case["steps"], got["lr"].tolist(), **settings)))
    if exercise_id == "train_step":
        got = out.get("nan_loss")
        if isinstance(got, dict) and "raised" in got:
            found.append(("a nan loss stops before any update",
                          judges.judge_nonfinite_stop(got["raised"], got["parameters_unchanged"])))
        for name in ("nan_loss", "inf_loss"):
            got = out.get(name)
            if isinstance(got, dict) and "no_backward" in got:
                found.append((f"no backward pass on a non-finite loss ({name})", _no_backward(got["no_backward"])))
        got = out.get("clipped")  # the one case whose gradient is longer than its max_grad_norm
        if isinstance(got, dict) and isinstance(got.get("step_grad_norms"), list):
            found.append(("optimizer.step() sees gradients clipped to max_grad_norm",
                          _clipped_before_step(got["step_grad_norms"], cases["clipped"]["max_grad_norm"])))
        if isinstance(got, dict) and "python_floats" in got:
            found.append(("returns Python floats", judges.judge_returned_floats(got["python_floats"], "train_step")))
    if exercise_id == "evaluate":
        for name in ("partial_batch", "started_in_eval"):
            got = out.get(name)
            if isinstance(got, dict) and "training_after" in got:
                found.append((f"training mode restored ({name})",
                              judges.judge_mode_restored(cases[name]["training"], got["training_after"])))
        got = out.get("partial_batch")
        if isinstance(got, dict) and "every_call_in_eval_without_grad" in got:
            found.append(("eval mode, no grad", judges.judge_eval_calls(got["every_call_in_eval_without_grad"])))
    if exercise_id == "next_token_probs":
        for name in ("hot", "ties_kept"):
            if isinstance(out.get(name), torch.Tensor):
                found.append((f"rows are probabilities ({name})", judges.judge_probabilities(out[name])))
        for name in ("top_k", "ties_kept"):
            if isinstance(out.get(name), torch.Tensor) and out[name].shape == cases[name]["logits"].shape:
                found.append((f"zero outside the top k, ties kept ({name})",
                              judges.judge_top_k(cases[name]["logits"], cases[name]["top_k"], out[name])))
        if isinstance(out.get("greedy_ties"), torch.Tensor):
            found.append(("temperature 0 is one-hot at the argmax",
                          judges.judge_one_hot(cases["greedy_ties"]["logits"], out["greedy_ties"])))
    if exercise_id == "generate":
        first = lambda name: out[name].get("tokens") if isinstance(out.get(name), dict) else None  # noqa: E731
        cached = first("greedy_cached")
        if isinstance(cached, torch.Tensor):
            found.append(("prompt kept, [B, T0 + n] int64",
                          judges.judge_generated(cases["greedy_cached"]["prompt"], cached, cases["greedy_cached"]["new"])))
        a, b = first("greedy_cached"), first("greedy_uncached")
        if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
            found.append(("cached equals uncached (greedy)", judges.judge_cache_agrees(a, b)))
        got = out.get("greedy_cached")
        if isinstance(got, dict) and "training_after" in got:
            found.append(("training mode restored", judges.judge_mode_restored(True, got["training_after"])))
        for name in ("sampled_cached", "sampled_plain"):
            got = out.get(name)
            if isinstance(got, dict) and "generator_drawn" in got:
                found.append((f"samples with the generator passed in ({name})",
                              _generator_drawn(got["generator_drawn"])))
    return found


def _clipped_before_step(norms, limit):
    """The text's order: backward, then clip, then step, so the step never sees a longer gradient."""
    if all(norm <= limit * (1 + 1e-4) + 1e-7 for norm in norms):
        return None
    worst = max(norms)
    return (f"optimizer.step() 用到的梯度总范数是 {worst:.4g}，超过了 max_grad_norm = {limit:g}：裁剪要在 backward "
            "之后、step 之前（backward → clip_grad_norm_ → step）。在 backward 之前裁剪，裁的是旧梯度或空梯度。",
            f"optimizer.step() used gradients of total norm {worst:.4g}, above max_grad_norm = {limit:g}: clip after "
            "backward and before step (backward, clip_grad_norm_, step). Clipping before backward clips old or empty "
            "gradients.")


def _no_backward(no_backward):
    """The text's order: the finiteness check comes between the forward pass and backward."""
    if no_backward:
        return None
    return ("损失不是有限数时，backward 之前就要抛出 FloatingPointError：你的代码先做了反向传播，nan 或 inf 已经写进了梯度。"
            "检查紧接在前向之后。",
            "a non-finite loss must raise FloatingPointError before backward: your code ran the backward pass first, "
            "which writes nan or inf into the gradients. Check right after the forward pass.")


def _generator_drawn(drawn):
    if drawn:
        return None
    return ("采样要用传入的 generator 抽取（torch.multinomial(..., generator=generator)）：你的代码一次也没有从它抽过，"
            "同一个随机种子就给不出同一段文字。",
            "sampling must draw with the generator passed in (torch.multinomial(..., generator=generator)): your code "
            "never drew from it, so the same seed cannot give the same text again.")

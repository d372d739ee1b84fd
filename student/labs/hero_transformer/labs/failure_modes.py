"""Seed 003 §2.15: the failure-mode catalogue (§2.15.1, .3, .4, .7, .8).  Five ways to get the block subtly wrong, none of
which raises an error: eps too large, no final LayerNorm, the wrong normalisation axis, a
"final LayerNorm" applied to the logits, ReLU's dead units.  Each is trained next to the course
model, and the seed's hand calculation for eps is redone exactly."""

import math

import torch

from .. import model as frozen
from . import diagnostics, variants
from .runner import Claim, Lab, Run, fmt, plot_curves, sample_batch, settings, train_variant

# eps 0.1: the largest of the seed's own eps table (§2.15.1)
SETTINGS = settings({"quick": {"n_layers": 4}, "full": {"n_layers": 12}}, eps_too_large=0.1)

CASES = {
    "course": {},
    "eps_too_large": {"eps": "eps_too_large"},
    "no_final_norm": {"final_norm": "none"},
    "time_axis_norm": {"norm_axis": "time"},
    "norm_after_head": {"final_norm": "after_head"},
    "relu": {"activation": "relu"},
}


def runs(setting):
    return [Run(name, {"case": name, **changes}, cost=setting["steps"]) for name, changes in CASES.items()]


def future_leak(model, idx):
    """How much the outputs before the last position move when only the last token changes."""
    changed = idx.clone()
    changed[:, -1] = (changed[:, -1] + 1) % model.cfg.vocab_size
    with torch.no_grad():
        return (model(idx).logits[:, :-1] - model(changed).logits[:, :-1]).abs().max().item()


def execute(run, setting, context):
    data = context.data
    changes = {k: setting[v] if v == "eps_too_large" else v for k, v in run.params.items() if k != "case"}
    result, model = train_variant(setting, context, variants.Variant(**changes), keep_model=True)
    idx, _ = sample_batch(data, setting["block_size"], setting["batch_size"], setting["seed"], context.device)
    model.eval()
    result["future_leak"] = future_leak(model, idx)
    with torch.no_grad():
        out = model(idx, collect=True)
        result["logit_std"] = out.logits.std().item()
        if hasattr(model, "ln_f") and model.variant.final_norm == "before_head":
            result["logit_std_without_ln_f"] = model.head(out.hidden_states[-1]).std().item()
    result["dead_slots"] = [layer["never_active"] for layer in diagnostics.ffn_memory(model, idx)]
    return result


def eps_table():
    """LayerNorm of the seed's near-constant input [1, 1, 1, 1.001] at three eps, computed."""
    x = torch.tensor([1.0, 1.0, 1.0, 1.001], dtype=torch.float64)
    found = {}
    for eps in (1e-5, 1e-3, 1e-1):
        norm = frozen.LayerNorm(4, eps=eps).double()
        with torch.no_grad():
            found[eps] = norm(x).tolist()
    return found


def final(results, case):
    return results["runs"][case]["result"]["final_val"]


SEED_EPS_TABLE = {1e-5: 0.866, 1e-3: 0.500, 1e-1: 0.050}  # the seed's "first two components", ±


def show_eps_table():
    return "; ".join(f"eps {eps:g}: {v[0]:+.4f} ×3, {v[3]:+.4f}" for eps, v in eps_table().items())


def judge_eps_flattens(results):
    largest = [max(abs(x) for x in values) for values in eps_table().values()]
    return show_eps_table(), all(b < a for a, b in zip(largest, largest[1:]))


def judge_eps_figures(results):
    table = eps_table()
    matches = all(abs(abs(table[eps][0]) - seed) < 0.01 and abs(abs(table[eps][1]) - seed) < 0.01
                  for eps, seed in SEED_EPS_TABLE.items())
    return show_eps_table(), matches


def judge_eps_train(results):
    course, large = final(results, "course"), final(results, "eps_too_large")
    return (f"eps {results['setting']['eps_too_large']:g}: {fmt(large)} against {fmt(course)}",
            large is not None and math.isfinite(large) and large > course)


def judge_ln_f_scale(results):
    r = results["runs"]["course"]["result"]
    ratio = r["logit_std_without_ln_f"] / r["logit_std"]
    return (f"logit std without ln_f / with: {ratio:.1f}× (the trained course model; judged held in 3-5.3×)",
            3 <= ratio <= 16 / 3)


def judge_after_head(results):
    run, uniform = results["runs"]["norm_after_head"]["result"], results["baselines"]["uniform"]
    value = run["final_val"]
    first = run["loss"][0] if run["loss"] else None
    return (f"first step {fmt(first)}, held-out at the end {fmt(value)} (uniform ln V {uniform:.3f})",
            value is not None and abs(value - uniform) < 0.1)


def judge_relu(results):
    gelu = max(results["runs"]["course"]["result"]["dead_slots"])
    relu = max(results["runs"]["relu"]["result"]["dead_slots"])
    return f"never-active slots, worst layer: ReLU {relu:.1%}, GELU {gelu:.1%}", relu > gelu


def judge_time_axis(results):
    r, course = results["runs"]["time_axis_norm"]["result"], final(results, "course")
    return (f"held-out {fmt(r['final_val'])} against {fmt(course)}; changing the last token moves earlier "
            f"logits by up to {r['future_leak']:.3g} (course model: {results['runs']['course']['result']['future_leak']:.3g})",
            r["final_val"] is not None and r["final_val"] > course)


CLAIMS = (
    Claim("eps_flattens", "近乎常数的输入 [1,1,1,1.001]：eps 越大，LayerNorm 的输出越被压扁。",
          "A near-constant input [1, 1, 1, 1.001]: the larger eps, the flatter LayerNorm's output.", "seed 003 §2.15.1",
          "±0.866 → ±0.500 → ±0.050 at eps 1e-5 / 1e-3 / 1e-1", judge_eps_flattens),
    Claim("eps_table_figures", "种子教材的数值：前两个分量约为 ±0.866 / ±0.500 / ±0.050。",
          "The seed's figures: the first two components are about ±0.866 / ±0.500 / ±0.050.", "seed 003 §2.15.1",
          "±0.866 / ±0.500 / ±0.050 (the input's std is 4.3e-4, and its first two components are equal)",
          judge_eps_figures),
    Claim("eps_large_trains_worse", "eps 过大不报错、不出 nan，只是 loss 略差。",
          "A too-large eps raises nothing and gives no nan; the loss is only somewhat worse.", "seed 003 §2.15.1",
          "no figure", judge_eps_train),
    Claim("no_ln_f_logit_scale", "去掉 ln_f，logits 的 std 大约变成 4 倍。",
          "Without ln_f the logits' std is about 4× larger.", "seed 003 §2.15.3", "about 4× (12-layer model)",
          judge_ln_f_scale),
    Claim("norm_after_head_uniform", "把归一化放在输出头之后，loss 从第 0 步起停在 ln V = 7.09 不动。",
          "A normalisation after the head keeps the loss at ln V = 7.09 from step 0.", "seed 003 §2.15.8",
          "7.09, never moves", judge_after_head),
    Claim("relu_dead_units", "换成 ReLU，从不激活的槽位比 GELU 多。",
          "With ReLU more slots are never active than with GELU.", "seed 003 §2.15.4",
          "more than GELU's 14.5% (no ReLU figure)", judge_relu),
    Claim("wrong_axis_worse", "归一化轴写错不报错，只是效果变差。",
          "Normalising over the wrong axis raises nothing and only trains worse.", "seed 003 §2.15.7",
          "no figure", judge_time_axis),
)


def plot(results, folder):
    return [plot_curves(results, folder, "curves", list(CASES), title="the failure-mode catalogue")]


LAB = Lab("failure_modes", "失败模式目录", "the failure-mode catalogue (eps, ln_f, axis, norm after head, ReLU)",
          "这五种错误都不会报错。你猜哪一种对 loss 伤害最大？哪一种几乎看不出来？先写下你的预测。",
          SETTINGS, runs, execute, CLAIMS, plot, order=10)

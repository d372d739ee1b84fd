"""Seed 003 §2.15: the failure-mode catalogue (§2.15.1, .3, .4, .7, .8).  Five ways to get the block subtly wrong, none of
which raises an error: eps too large, no final LayerNorm, the wrong normalisation axis, a
"final LayerNorm" applied to the logits, ReLU's dead units.  Each is trained next to the course
model, and the seed's hand calculation for eps is redone exactly."""

import math

import torch

from .. import model as frozen
from . import diagnostics, variants
from .evidence import equal, less, more, seed_config, within
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


def judge_eps_flattens(view):
    largest = {eps: max(abs(x) for x in values) for eps, values in eps_table().items()}
    pairs = list(largest.items())
    return show_eps_table(), [less(f"largest |output| at eps {b:g} − at {a:g}", y - x, 0)
                              for (a, x), (b, y) in zip(pairs, pairs[1:])]


def judge_eps_figures(view):
    table = eps_table()
    off = max(abs(abs(table[eps][i]) - seed) for eps, seed in SEED_EPS_TABLE.items() for i in (0, 1))
    return show_eps_table(), [less("largest distance of a first-two component from the seed's figure", off, 0.01)]


def judge_eps_train(view):
    course, large = final(view, "course"), final(view, "eps_too_large")
    finite = large is not None and math.isfinite(large)
    return (f"eps {view['setting']['eps_too_large']:g}: {fmt(large)} against {fmt(course)}",
            [equal("the eps-too-large run ends finite (1: yes)", 1.0 if finite else 0.0, 1.0),
             more("eps too large − course model", large - course if finite and course is not None else None, 0)])


def judge_ln_f_scale(view):
    """The seed's figure is for its 12-layer model: judged on that depth only (mode full)."""
    r = view["runs"]["course"]["result"]
    ratio = r["logit_std_without_ln_f"] / r["logit_std"]
    return (f"logit std without ln_f / with: {ratio:.1f}× (the trained course model, {view['setting']['n_layers']} layers)",
            [seed_config(view["mode"]), *within("logit std without ln_f / with", ratio, 3, 16 / 3)])


def judge_after_head(view):
    run, uniform = view["runs"]["norm_after_head"]["result"], view["baselines"]["uniform"]
    value = run["final_val"]
    first = run["first_loss"]
    return (f"first step {fmt(first)}, held-out at the end {fmt(value)} (uniform ln V {uniform:.3f})",
            [less("|held-out at the end − ln V|", None if value is None else abs(value - uniform), 0.1)])


def judge_relu(view):
    gelu = max(view["runs"]["course"]["result"]["dead_slots"])
    relu = max(view["runs"]["relu"]["result"]["dead_slots"])
    return (f"never-active slots, worst layer: ReLU {relu:.1%}, GELU {gelu:.1%}",
            [more("never-active share, worst layer: ReLU − GELU", relu - gelu, 0)])


def judge_time_axis(view):
    r, course = view["runs"]["time_axis_norm"]["result"], final(view, "course")
    worse = None if None in (r["final_val"], course) else r["final_val"] - course
    return (f"held-out {fmt(r['final_val'])} against {fmt(course)}; changing the last token moves earlier "
            f"logits by up to {r['future_leak']:.3g} (course model: {view['runs']['course']['result']['future_leak']:.3g})",
            [more("time-axis norm − course model", worse, 0)])


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


def plot(views, folder):
    return [plot_curves(views, folder, "curves", list(CASES), title="the failure-mode catalogue")]


LAB = Lab("failure_modes", "失败模式目录", "the failure-mode catalogue (eps, ln_f, axis, norm after head, ReLU)",
          "这五种错误都不会报错。你猜哪一种对 loss 伤害最大？哪一种几乎看不出来？先写下你的预测。",
          SETTINGS, runs, execute, CLAIMS, plot, order=10)

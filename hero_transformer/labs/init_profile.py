"""Seed 003 §2.6 (the table under figure 2.1): the residual stream at initialisation, 6 to 48 layers.

No training: one forward and backward pass of an initialised model on a fixed held-out batch, and
the std of the activations and of their gradients after every block (diagnostics.residual_profile).
Both initialisations are measured: the seed's case runs without the 1/sqrt(2N) scaling, and the
course model with it."""

import math

import torch

from . import diagnostics, variants
from .evidence import less, more
from .runner import Claim, Lab, Run, config, figure, one, sample_batch, save, settings

SETTINGS = settings({"tiny": {"depths": [2, 4]},
                     # an init profile costs one pass per model: quick uses the seed's width
                     "quick": {"depths": [6, 12, 24, 48], "d_model": 128, "d_ff": 256, "batch_size": 16,
                               "seeds": [0, 1, 2, 3, 4]},
                     "full": {"depths": [6, 12, 24, 48], "seeds": [0, 1, 2, 3, 4]}})


def runs(setting):
    return [Run(f"{placement}_L{depth}_{'scaled' if scaled else 'plain'}",
                {"placement": placement, "n_layers": depth, "scaled_init": scaled})
            for scaled in (False, True) for depth in setting["depths"] for placement in ("pre", "post")]


def execute(run, setting, context):
    data = context.data
    p = run.params
    model = variants.build(config(setting, data, n_layers=p["n_layers"]),
                           variants.Variant(placement=p["placement"], scaled_init=p["scaled_init"]),
                           seed=setting["seed"], device=context.device)
    idx, targets = sample_batch(data, setting["block_size"], setting["batch_size"], setting["seed"], context.device)
    profile = diagnostics.residual_profile(model, idx, targets)
    blocks_act, blocks_grad = profile["activation_std"][1:], profile["grad_std"][1:]  # block outputs, as the seed
    profile.update(act_last_over_first=blocks_act[-1] / blocks_act[0],
                   grad_first_over_last=blocks_grad[0] / blocks_grad[-1], grad_first=blocks_grad[0])
    with torch.no_grad():  # seed 003 §2.8.3's first prediction: what every LayerNorm is fed
        norms = diagnostics.norm_input_stats(model, idx)
    profile["norm_input_std"] = sum(entry["std"] for entry in norms) / len(norms)
    return profile


def ratios(results, key, placement, scaled=False):
    return [one(results, placement=placement, n_layers=d, scaled_init=scaled)[key] for d in results["setting"]["depths"]]


def show(values):
    return " / ".join(f"{v:.2f}" for v in values)


def judge_growth(view):
    pre, post = ratios(view, "act_last_over_first", "pre"), ratios(view, "act_last_over_first", "post")
    depths = view["setting"]["depths"]
    checks = [more(f"pre-LN L{b} − L{a}", y - x, 0) for a, b, x, y in zip(depths, depths[1:], pre, pre[1:])]
    checks.append(less("post-LN largest |ratio − 1|", max(abs(v - 1) for v in post), 0.05))
    return f"pre-LN {show(pre)}, post-LN {show(post)} (depths {depths}, no scaled init)", checks


def judge_sqrt_depth(view):
    pre, depths = ratios(view, "act_last_over_first", "pre"), view["setting"]["depths"]
    over = [r / math.sqrt(d) for r, d in zip(pre, depths)]
    return f"pre-LN ratio / sqrt(L): {show(over)}", [more("smallest ratio / sqrt(L)", min(over), 0.5),
                                                     less("largest ratio / sqrt(L)", max(over), 2)]


def judge_grad_gap(view):
    pre, post = ratios(view, "grad_first", "pre"), ratios(view, "grad_first", "post")
    gaps = [a / b for a, b in zip(pre, post)]
    return (f"pre/post gradient std after block 1: {' / '.join(f'{g:.1f}×' for g in gaps)}",
            [more("smallest pre/post gap", min(gaps), 10), less("largest pre/post gap", max(gaps), 25)])


def judge_grad_balance(view):
    pre, post = ratios(view, "grad_first_over_last", "pre"), ratios(view, "grad_first_over_last", "post")
    depths = view["setting"]["depths"]
    checks = [more(f"pre-LN gradient first/last, L{b} − L{a}", y - x, 0) for a, b, x, y in zip(depths, depths[1:], pre, pre[1:])]
    checks += [more("pre-LN smallest gradient first/last", min(pre), 1.5),
               less("post-LN largest |gradient first/last − 1|", max(abs(v - 1) for v in post), 0.05)]
    return f"gradient std first/last: pre-LN {show(pre)}, post-LN {show(post)} (depths {depths})", checks


def judge_healthy_under_4(view):
    plain, scaled = ratios(view, "act_last_over_first", "pre"), ratios(view, "act_last_over_first", "pre", True)
    depths = view["setting"]["depths"]
    deep = [(d, v) for d, v in zip(depths, plain) if d >= 24]
    return (f"pre-LN last/first {show(plain)} without, {show(scaled)} with 1/sqrt(2N) (depths {depths})",
            [*[more(f"L{d} without 1/sqrt(2N)", v, 4) for d, v in deep], less("largest with 1/sqrt(2N)", max(scaled), 4)])


def judge_norm_inputs(view):
    pre, post = ratios(view, "norm_input_std", "pre"), ratios(view, "norm_input_std", "post")
    return (f"mean std of every LayerNorm's input: pre-LN {' / '.join(f'{v:.3f}' for v in pre)}, post-LN "
            f"{' / '.join(f'{v:.3f}' for v in post)} (depths {view['setting']['depths']}, at initialisation)",
            [more(f"post-LN / pre-LN at L{d}", b / a, 1) for d, a, b in zip(view["setting"]["depths"], pre, post)])


def judge_scaled(view):
    plain, scaled = ratios(view, "act_last_over_first", "pre"), ratios(view, "act_last_over_first", "pre", True)
    return (f"pre-LN last/first with 1/sqrt(2N): {show(scaled)} (without: {show(plain)})",
            [more("smallest (without − with 1/sqrt(2N))", min(p - s for p, s in zip(plain, scaled)), 0),
             more("growth over depths: range without − range with", (max(plain) - min(plain)) - (max(scaled) - min(scaled)), 0)])


CLAIMS = (
    Claim("pre_ln_grows_post_ln_flat", "初始化时，Pre-LN 最后一层与第一层激活 std 之比随深度增长，Post-LN 恒为 1。",
          "At initialisation pre-LN's activation std (last block over first) grows with depth; post-LN's stays 1.",
          "seed 003 §2.6", "pre-LN 2.57 / 3.87 / 5.68 / 7.78, post-LN 1.00 at 6 / 12 / 24 / 48 layers",
          judge_growth),
    Claim("about_sqrt_depth", "Pre-LN 的增长大约是 √L。", "Pre-LN's growth is about sqrt(L).", "seed 003 §2.7.3 (eq. 2.2)",
          "5.68 vs sqrt(24) = 4.9; 7.78 vs sqrt(48) = 6.9", judge_sqrt_depth),
    Claim("post_ln_gradient_15x", "Post-LN 第一层的梯度约小 15 倍，且不随深度变化。",
          "Post-LN's gradient at the first block is about 15× smaller, at every depth.", "seed 003 §2.6",
          "9.7e-6 vs 1.6e-4; by its own table 17 / 16 / 15 / 23× (the 48-layer figure contradicts 'about 15×')",
          judge_grad_gap),
    Claim("gradient_balance", "Pre-LN 的梯度沿深度不均匀（首/末 2–8 倍，随深度增大），Post-LN 均匀（1.00）。",
          "Pre-LN's gradient is uneven along depth (first/last 2-8×, growing with depth); post-LN's is even (1.00).",
          "seed 003 §2.6", "pre-LN 2.12 / 3.16 / 4.10 / 8.63, post-LN 1.00 at 6 / 12 / 24 / 48 layers",
          judge_grad_balance),
    Claim("healthy_under_4", "末/首比 < 4 才算健康：不缩放初始化的 Pre-LN 从 24 层起超过 4，1/√(2N) 缩放让它在每个深度都低于 4。",
          "Last/first under 4 is healthy: pre-LN without 1/sqrt(2N) exceeds it from 24 layers; with it, every depth stays under 4.",
          "seed 003 §2.5.1 (checklist), §2.6", "< 4 healthy; 5.68 / 7.78 at 24 / 48 layers without the scaled init",
          judge_healthy_under_4),
    Claim("post_ln_norm_inputs_larger", "Post-LN 的 LayerNorm 输入 σ 更大（§2.8.3 的第一条预测）。",
          "Post-LN's LayerNorms are fed inputs with a larger std (§2.8.3's first prediction).", "seed 003 §2.8.3",
          "predicted, 'supported by our data' (no figure)", judge_norm_inputs),
    Claim("scaled_init_flattens", "1/√(2N) 缩放初始化让 Pre-LN 的增长变小（式 2.19：与深度无关）。",
          "The 1/sqrt(2N) init shrinks pre-LN's growth (eq. 2.19: independent of depth).", "seed 003 §2.24 (eq. 2.19)",
          "no table: the seed's measured growth is with its case setting", judge_scaled),
)


def plot(views, folder):
    results = views[0]  # the first seed's profiles
    depths = results["setting"]["depths"]
    fig, axes = figure(columns=2)
    for scaled, style in ((False, "-"), (True, ":")):
        for placement, color in (("pre", "C0"), ("post", "C1")):
            tag = f"{placement}-LN{', 1/sqrt(2N)' if scaled else ''}"
            axes[0].plot(depths, ratios(results, "act_last_over_first", placement, scaled), style, color=color,
                         marker="o", markerfacecolor="none" if scaled else color, markersize=8 if scaled else 5,
                         label=tag)
    axes[0].set_xlabel("layers")
    axes[0].set_ylabel("activation std: last block / first")
    axes[0].set_title("growth with depth (post-LN's two lines coincide at 1)")
    axes[0].legend(fontsize=7)
    deepest = depths[-1]
    for placement, color in (("pre", "C0"), ("post", "C1")):
        profile = one(results, placement=placement, n_layers=deepest, scaled_init=False)
        axes[1].plot(range(1, deepest + 1), profile["activation_std"][1:], color=color, label=f"{placement}-LN activation std")
        axes[1].plot(range(1, deepest + 1), profile["grad_std"][1:], "--", color=color, label=f"{placement}-LN gradient std")
    axes[1].set_yscale("log")
    axes[1].set_xlabel(f"block ({deepest} layers, no scaled init)")
    axes[1].set_ylabel("std after the block (log scale)")
    axes[1].set_title("the residual stream, block by block")
    axes[1].legend(fontsize=7)
    return [save(fig, folder, "profile")]


LAB = Lab("init_profile", "初始化时的激活与梯度画像", "activation and gradient profile at initialisation (6-48 layers)",
          "刚初始化、还没训练时，48 层 Pre-LN 的最后一层激活 std 是第一层的几倍？Post-LN 呢？先写下你的预测。",
          SETTINGS, runs, execute, CLAIMS, plot, order=3, version=2)

"""Seed 003 §2.10: RMSNorm against LayerNorm, parameters and loss, with the noise between seeds."""

from . import variants
from .runner import VOCAB_SIZE, Claim, Lab, config, execute_training, fmt, one, plot_curves, settings, training_run

SETTINGS = settings({"tiny": {"seeds": [0]}, "quick": {"seeds": [0, 1]}, "full": {"seeds": [0, 1]}})


def runs(setting):
    # both with the course's init; the seed changes only the norm (its RMSNorm: eps 1e-6, ours 1e-5)
    return [training_run(f"{norm}_s{seed}", setting, {"norm": norm}, norm=norm, seed=seed)
            for seed in setting["seeds"] for norm in ("layer", "rms")]


def finals(results, norm):
    return [one(results, norm=norm, seed=s)["final_val"] for s in results["setting"]["seeds"]]


def parameters(setting, norm):
    cfg = config(setting, {"vocab_size": VOCAB_SIZE})
    return sum(p.numel() for p in variants.LabLM(cfg, variants.Variant(norm=norm)).parameters())


def judge_parameters(results):
    full = SETTINGS["full"]
    layer, rms = parameters(full, "layer"), parameters(full, "rms")
    saved = layer - rms
    return (f"{layer:,} vs {rms:,} at the seed's size (untied head): {saved:,} saved, "
            f"{saved / layer:.2%}", saved == (2 * full["n_layers"] + 1) * full["d_model"])


def judge_loss(results):
    """Held when the difference of the means is smaller than the spread that a change of seed
    alone makes (the larger of the two norms' seed spreads); undecided with one seed."""
    layer, rms = finals(results, "layer"), finals(results, "rms")
    if None in layer + rms:
        return "a run diverged", False
    mean = lambda values: sum(values) / len(values)
    ours = (f"LayerNorm {', '.join(fmt(v) for v in layer)}; RMSNorm {', '.join(fmt(v) for v in rms)}; "
            f"difference of means {mean(rms) - mean(layer):+.3f}")
    if len(layer) < 2:
        return ours + " (one seed: no noise to compare with)", None
    noise = max(max(layer) - min(layer), max(rms) - min(rms))
    return ours + f"; seed-to-seed spread {noise:.3f}", abs(mean(rms) - mean(layer)) < noise


def judge_centring(results):
    run = one(results, norm="layer", seed=results["setting"]["seeds"][0])
    if "diagnostics" not in run:
        return "the LayerNorm run diverged", False
    stats = run["diagnostics"]["norm_inputs"]
    ratios = [entry["ratio"] for entry in stats]
    return (f"|mean| / std of every LayerNorm's input: {min(ratios):.1%} to {max(ratios):.1%} "
            f"({len(ratios)} norms, trained LayerNorm model)", max(ratios) < 0.1)


CLAIMS = (
    Claim("rms_parameters", "RMSNorm 只省下每个归一化层的 β：3,200 个参数（0.18%）。",
          "RMSNorm saves only each norm's beta: 3,200 parameters (0.18%).", "seed 003 §2.10.1",
          "1,745,664 vs 1,742,464 (tied head, 64 positions): 3,200, 0.18%", judge_parameters),
    Claim("rms_same_loss", "RMSNorm 和 LayerNorm 的 loss 差别远小于训练噪声。",
          "RMSNorm and LayerNorm differ in loss by far less than the training noise.", "seed 003 §2.10.2",
          "4.252 vs 4.245: 0.007 (one seed each)", judge_loss),
    Claim("centring_is_small", "训练后 LayerNorm 输入的均值只有其标准差的约 2%，所以去掉减均值几乎无损。",
          "After training a LayerNorm's input mean is only about 2% of its std, so dropping the centring costs little.",
          "seed 003 §2.8.2", "|mean| 0.031 / 0.018, 2.6% / 1.5% of the std (layers 0 and 1)", judge_centring),
)


def plot(results, folder):
    keys = [f"{n}_s{s}" for s in results["setting"]["seeds"] for n in ("layer", "rms")]
    return [plot_curves(results, folder, "curves", keys, title="LayerNorm and RMSNorm (pre-LN)")]


LAB = Lab("rmsnorm", "RMSNorm 对比 LayerNorm", "RMSNorm against LayerNorm (parameters and loss)",
          "去掉减均值和 β，loss 会变差多少？和换一个随机种子的差别比呢？先写下你的预测。",
          SETTINGS, runs, execute_training, CLAIMS, plot, order=6)

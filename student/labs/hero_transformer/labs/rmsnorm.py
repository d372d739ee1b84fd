"""Seed 003 §2.10: RMSNorm against LayerNorm, parameters and loss, with the noise between seeds."""

from . import variants
from .evidence import equal, less, within
from .runner import (VOCAB_SIZE, Claim, Lab, config, execute_training, figure, fmt, one, plot_curves, save,
                     settings, training_run)

# the loss difference is judged against the seed-to-seed noise: five seeds where they are cheap
SETTINGS = settings({"quick": {"seeds": [0, 1, 2, 3, 4]}})


def runs(setting):
    # both with the course's init; the seed changes only the norm (its RMSNorm: eps 1e-6, ours 1e-5)
    return [training_run(norm, setting, {"norm": norm}, norm=norm) for norm in ("layer", "rms")]


def final(view, norm):
    return one(view, norm=norm)["final_val"]


def parameters(setting, norm):
    cfg = config(setting, {"vocab_size": VOCAB_SIZE})
    return sum(p.numel() for p in variants.LabLM(cfg, variants.Variant(norm=norm)).parameters())


def judge_parameters(view):
    full = SETTINGS["full"]
    layer, rms = parameters(full, "layer"), parameters(full, "rms")
    saved = layer - rms
    return (f"{layer:,} vs {rms:,} at the seed's size (untied head): {saved:,} saved, {saved / layer:.2%}",
            [equal("parameters saved − (2N+1)·d", saved - (2 * full["n_layers"] + 1) * full["d_model"], 0)])


def judge_loss(view):
    """The paired difference (same seed, only the norm changed) lies within ±0.05 nat: under
    the seed-to-seed spread of a final loss (about 0.08) and the seed's own 0.1-0.2 noise floor."""
    layer, rms = final(view, "layer"), final(view, "rms")
    difference = None if None in (layer, rms) else rms - layer
    return (f"LayerNorm {fmt(layer)}, RMSNorm {fmt(rms)}: difference {fmt(difference)}",
            within("RMSNorm − LayerNorm", difference, -0.05, 0.05))


def judge_centring(view):
    run = one(view, norm="layer")
    ratios = [entry["ratio"] for entry in run["diagnostics"]["norm_inputs"]] if "diagnostics" in run else [None]
    if None in ratios:
        return "the LayerNorm run diverged", [less("largest |mean| / std of a LayerNorm's input", None, 0.1)]
    return (f"|mean| / std of every LayerNorm's input: {min(ratios):.1%} to {max(ratios):.1%} "
            f"({len(ratios)} norms, trained LayerNorm model)", [less("largest |mean| / std of a LayerNorm's input", max(ratios), 0.1)])


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


def plot(views, folder):
    fig, (ax,) = figure()
    seeds = [view["setting"]["seed"] for view in views]
    for norm, marker in (("layer", "o"), ("rms", "s")):
        ax.plot(seeds, [final(view, norm) for view in views], marker, label=f"{norm} norm")
    ax.set_xticks(seeds)
    ax.set_xlabel("seed (same data order and init draws for both norms)")
    ax.set_ylabel("final held-out loss")
    ax.legend(fontsize=7)
    return [plot_curves(views, folder, "curves", ["layer", "rms"], title="LayerNorm and RMSNorm (pre-LN)"),
            save(fig, folder, "finals_by_seed")]


LAB = Lab("rmsnorm", "RMSNorm 对比 LayerNorm", "RMSNorm against LayerNorm (parameters and loss)",
          "去掉减均值和 β，loss 会变差多少？和换一个随机种子的差别比呢？先写下你的预测。",
          SETTINGS, runs, execute_training, CLAIMS, plot, order=6)

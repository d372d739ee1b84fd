"""Seed 003 §2.25.2 (exercise 2): from how many layers on does pre-LN need the scaled init?

Each depth of the seed's series (8, 16, 32, 64 in full; quick halves it) trains twice, with
the residual writers at std 0.02/sqrt(2N) and at plain 0.02; everything else is the course
model.  Besides the loss, each trained model's residual stream after the last block is measured
(its std over a held-out batch): the "last-layer activation scale" the exercise asks for, which
eq. 2.19 says grows with depth without the scaling.
"""

import torch

from .evidence import more, report, trained
from .runner import Claim, Lab, fmt, one, plot_finals, sample_batch, settings, train_run, training_run

SETTINGS = settings({"tiny": {"depths": [1, 2]}, "quick": {"depths": [4, 8, 16, 32]},
                     "full": {"depths": [8, 16, 32, 64]}})
VERSIONS = {"scaled": True, "plain": False}


def runs(setting):
    return [training_run(f"L{depth}_{version}", setting, {"scaled_init": scaled}, n_layers=depth, scaled=version)
            for depth in setting["depths"] for version, scaled in VERSIONS.items()]


def execute(run, setting, context):
    result, model = train_run(run, setting, context, keep_model=True)
    idx, _ = sample_batch(context.data, setting["block_size"], 8, setting["seed"], context.device)
    model.eval()
    with torch.no_grad():
        result["last_stream_std"] = model(idx, collect=True).hidden_states[-1].std().item()
    return result


def value(view, depth, version, key="final_val"):
    return one(view, n_layers=depth, scaled=version)[key]


def gaps(view):
    """No scaled init − scaled, per depth (None where a run diverged)."""
    out = []
    for depth in view["setting"]["depths"]:
        plain, scaled = value(view, depth, "plain"), value(view, depth, "scaled")
        out.append(None if None in (plain, scaled) else plain - scaled)
    return out


def stream_ratios(view):
    return [value(view, d, "plain", "last_stream_std") / value(view, d, "scaled", "last_stream_std")
            for d in view["setting"]["depths"]]


def judge_critical_depth(view):
    depths, differences = view["setting"]["depths"], gaps(view)
    first, last = differences[0], differences[-1]
    return (" / ".join(f"L{d} {fmt(g)}" for d, g in zip(depths, differences)) + " (no scaled init − scaled)",
            [trained(f"scaled init, L{depths[-1]}", value(view, depths[-1], "scaled"), view["baselines"]["unigram"]),
             *[report(f"no scaled init − scaled, L{d}", g) for d, g in zip(depths[:-1], differences)],
             more(f"no scaled init − scaled, L{depths[-1]}", last, 0),
             more(f"gap at L{depths[-1]} − gap at L{depths[0]}", None if None in (first, last) else last - first, 0)])


def judge_stream(view):
    depths, ratios = view["setting"]["depths"], stream_ratios(view)
    return ("last stream std, no scaled init / scaled: " + " / ".join(f"L{d} {r:.2f}" for d, r in zip(depths, ratios)),
            [more(f"last stream std ratio, L{depths[-1]}", ratios[-1], 1),
             more(f"ratio at L{depths[-1]} − ratio at L{depths[0]}", ratios[-1] - ratios[0], 0)])


CLAIMS = (
    Claim("scaled_init_needed_when_deep", "Pre-LN 的残差缩放初始化（1/√(2L)）过了某个层数就变成必需：不加时 loss 差值随层数上升。",
          "Pre-LN's scaled init (1/sqrt(2L)) becomes necessary past some depth: without it the loss gap grows with "
          "depth.", "seed 003 §2.25.2 (exercise 2), §2.17.5 (row 4)",
          "an exercise: depths 8/16/32/64; row 4 says 'deep stacks slow down, shallow ones do not notice'",
          judge_critical_depth),
    Claim("plain_init_grows_the_stream", "不加缩放初始化，末层激活尺度更大，而且层数越深越明显。",
          "Without the scaled init the last layer's activations are larger, the more so the deeper the stack.",
          "seed 003 §2.25.2 (exercise 2), eq. 2.19", "no figure (eq. 2.19: the stream's variance grows with 2N·0.02²)",
          judge_stream),
)


def plot(views, folder):
    depths = views[0]["setting"]["depths"]
    return [plot_finals(views, folder, "gap_by_depth", depths, {"no scaled init − scaled": gaps}, "layers",
                        log_base=2, title="how much the scaled init is worth, by depth", ylabel="held-out loss gap (nats)",
                        extra=lambda ax: ax.axhline(0, color="black", linewidth=0.6), unigram=False),
            plot_finals(views, folder, "finals", depths,
                        {version: (lambda view, v=version: [value(view, d, v) for d in depths]) for version in VERSIONS},
                        "layers", log_base=2, title="final held-out loss with and without the scaled init")]


LAB = Lab("init_depth", "残差缩放初始化从多少层开始变得必需", "from how many layers on pre-LN needs the scaled init (§2.25.2)",
          "8、16、32、64 层的 Pre-LN，各跑有、无 1/√(2L) 缩放初始化两版。你预计 loss 差值从哪个层数开始明显上升？先写下你的预测。",
          SETTINGS, runs, execute, CLAIMS, plot, order=17)

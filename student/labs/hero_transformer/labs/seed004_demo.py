"""Seed 004's demo: 6-layer pre-LN and post-LN stacks from the same weights and the same input,
one backward pass of the language-model loss, the embedding's gradient norm side by side.

Seed 004 gives neither its initialisation nor the loss it differentiates.  Both common
initialisations are run, each over several seeds: the course's (seed 003: N(0, 0.02²), residual
writers scaled by 1/sqrt(2N)) and PyTorch's module defaults (embeddings N(0, 1)), which is what
code that builds nn modules without an init function gets."""

import torch

from . import variants
from .evidence import equal, within
from .runner import Claim, Lab, Run, config, sample_batch, settings

# seed 004's block: d_ff = 4 d; its sizes are not given, so the course's width with 4 d
SETTINGS = settings({"tiny": {"seeds": [0, 1]}, "quick": {"seeds": [0, 1, 2, 3, 4], "d_model": 128, "d_ff": 512},
                     "full": {"seeds": list(range(10)), "d_model": 128, "d_ff": 512}}, n_layers=6, batch_size=8)


INITS = ("course", "pytorch")


def runs(setting):
    return [Run(init, {"init": init}) for init in INITS]


def stack(setting, data, placement, init, seed, device):
    variant = variants.Variant(placement=placement)
    if init == "course":
        return variants.build(config(setting, data), variant, seed=seed, device=device)
    torch.manual_seed(seed)  # PyTorch's defaults, drawn in the same order for both placements
    return variants.LabLM(config(setting, data), variant).to(device)


def execute(run, setting, context):
    data = context.data
    idx, targets = sample_batch(data, setting["block_size"], setting["batch_size"], setting["seed"], context.device)
    found = {}
    for placement in ("pre", "post"):
        # the same seed draws the same weights: the two stacks differ only in where the norms sit
        model = stack(setting, data, placement, run.params["init"], setting["seed"], context.device)
        out = model(idx, targets)
        out.loss.backward()
        found[placement] = {"embedding_grad_norm": model.token_embedding.weight.grad.norm().item(),
                            "output_shape": list(out.logits.shape), "loss": out.loss.item(),
                            "logits": out.logits.detach()}
    same_output = torch.allclose(found["pre"].pop("logits"), found["post"].pop("logits"))
    return {**found, "ratio": found["pre"]["embedding_grad_norm"] / found["post"]["embedding_grad_norm"],
            "outputs_equal": same_output}


def judge_ratio(view):
    """An order of magnitude: 5-20× (halfway to one order below and above 10×), under either init."""
    ratios = {init: view["runs"][init]["result"]["ratio"] for init in INITS}
    return (f"pre/post embedding gradient norm: {'; '.join(f'{init} init {r:.2f}×' for init, r in ratios.items())}",
            [c for init, r in ratios.items() for c in within(f"{init} init: pre/post", r, 5, 20)])


def judge_shapes(view):
    runs = [view["runs"][init]["result"] for init in INITS]
    same = all(r["pre"]["output_shape"] == r["post"]["output_shape"] for r in runs)
    differ = all(not r["outputs_equal"] for r in runs)
    return (f"both {runs[0]['pre']['output_shape']}; outputs differ: {differ}",
            [equal("shapes equal (1: yes)", float(same), 1.0), equal("outputs differ (1: yes)", float(differ), 1.0)])


CLAIMS = (
    Claim("embedding_gradient_10x", "一次 backward 后，Pre-LN 堆叠的嵌入梯度比 Post-LN 大一个数量级。",
          "After one backward pass the pre-LN stack's embedding gradient is an order of magnitude larger.",
          "seed 004", "about 10× (no figure given)", judge_ratio),
    Claim("same_shape_other_output", "两种堆叠输出形状相同、输出不同（同样的初始权重）。",
          "Both stacks give the same shape and different outputs from the same weights.", "seed 004 (exercise 4)",
          "shapes equal, outputs not allclose", judge_shapes),
)


def plot(views, folder):
    from .runner import figure, save

    fig, axes = figure(columns=len(INITS))
    seeds = [view["setting"]["seed"] for view in views]
    for ax, init in zip(axes, INITS):
        chosen = [view["runs"][init]["result"] for view in views]
        width = 0.4
        ax.bar([s - width / 2 for s in seeds], [r["pre"]["embedding_grad_norm"] for r in chosen], width, label="pre-LN")
        ax.bar([s + width / 2 for s in seeds], [r["post"]["embedding_grad_norm"] for r in chosen], width, label="post-LN")
        ax.set_xticks(seeds)
        ax.set_xlabel("seed (same weights and input for both stacks)")
        ax.set_ylabel("embedding gradient norm")
        ax.set_title(f"6 layers, one backward pass, {init} init")
        ax.set_ylim(0, 1.3 * max(max(r["pre"]["embedding_grad_norm"], r["post"]["embedding_grad_norm"]) for r in chosen))
        ax.legend(loc="upper right", ncols=2)
    return [save(fig, folder, "embedding_gradients")]


LAB = Lab("seed004_demo", "seed 004 的演示：嵌入梯度并排", "seed 004's demo: embedding gradient norms, 6-layer pre/post",
          "同一组初始权重、同一个输入，6 层 Pre-LN 和 Post-LN 的嵌入梯度谁大？大几倍？先写下你的预测。",
          SETTINGS, runs, execute, CLAIMS, plot, order=11)

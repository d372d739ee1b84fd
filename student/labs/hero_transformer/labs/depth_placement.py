"""Seed 003 §2.1 (experiment 1): pre-LN and post-LN stacks of 6, 12 and 24 layers at lr 3e-3."""

from .runner import Claim, Lab, execute_training, fmt, one, plot_curves, plot_finals, settings, stalled, training_run

# the seed's case runs have no 1/sqrt(2N) scaling on either side (seed 003 §2.3.3)
SETTINGS = settings({"tiny": {"depths": [1, 2]}, "quick": {"depths": [6, 12, 24]}, "full": {"depths": [6, 12, 24]}})


def runs(setting):
    return [training_run(f"{placement}_L{depth}", setting, {"placement": placement, "scaled_init": False},
                         n_layers=depth, placement=placement)
            for depth in setting["depths"] for placement in ("pre", "post")]


def finals(results, placement):
    return [one(results, placement=placement, n_layers=d)["final_val"] for d in results["setting"]["depths"]]


def judge_stall(results):
    unigram = results["baselines"]["unigram"]
    pre, post = finals(results, "pre"), finals(results, "post")
    ours = (f"post-LN {', '.join(fmt(v) for v in post)}; pre-LN {', '.join(fmt(v) for v in pre)} "
            f"(depths {results['setting']['depths']}); held-out unigram {unigram:.3f}")
    if None in pre + post:
        return ours, False
    return ours, all(stalled(p, unigram, h) for p, h in zip(post, pre))


def judge_same_loss(results):
    post = finals(results, "post")
    if None in post:
        return "a post-LN run diverged", False
    spread = max(post) - min(post)
    return f"post-LN spread over depths {spread:.3f}", spread < 0.05


def judge_depth_cost(results):
    pre = finals(results, "pre")
    if None in pre:
        return "a pre-LN run diverged", False
    return f"pre-LN {' → '.join(fmt(v) for v in pre)}", all(a <= b + 0.02 for a, b in zip(pre, pre[1:]))


def middle(results):
    depths = results["setting"]["depths"]
    return depths[len(depths) // 2]


def judge_kl(results):
    depth = middle(results)
    pre, post = (one(results, placement=p, n_layers=depth).get("diagnostics", {}).get("adjacent_kl") for p in ("pre", "post"))
    if pre is None or post is None:
        return "a run diverged", False
    return f"{depth} layers: post-LN {post:.4f}, pre-LN {pre:.3f}", post < 0.01 and pre > 0.05


def judge_entropy(results):
    depth = middle(results)
    found = {}
    for p in ("pre", "post"):
        run = one(results, placement=p, n_layers=depth)
        if "diagnostics" not in run:
            return f"the {p}-LN run diverged", False
        heads = [h for layer in run["diagnostics"]["attention_entropy"] for h in layer]
        found[p] = (min(heads), sum(heads) / len(heads), max(heads))
    ours = "; ".join(f"{p}-LN min/mean/max {a:.2f} / {b:.2f} / {c:.2f}" for p, (a, b, c) in found.items())
    return ours + f" ({depth} layers, every head)", 0.5 <= found["pre"][1] <= 0.9


CLAIMS = (
    Claim("post_ln_stalls", "学习率 3e-3 时 Post-LN 停在 unigram 基线附近，Pre-LN 远低于它。",
          "At lr 3e-3 post-LN stalls near the unigram baseline while pre-LN goes well below it.",
          "seed 003 §2.1, table 2.1", "post-LN 5.356 / 5.357 / 5.357, pre-LN 4.213 / 4.245 / 4.370 "
          "(6 / 12 / 24 layers, 1,200 steps); unigram 5.672", judge_stall),
    Claim("post_ln_same_loss", "Post-LN 三个深度停在几乎同一个 loss 上。",
          "Post-LN ends at almost the same loss at every depth.", "seed 003 §2.1",
          "5.356 / 5.357 / 5.357: spread 0.001", judge_same_loss),
    Claim("pre_ln_depth_cost", "同样的步数下，Pre-LN 越深 loss 反而略高。",
          "With the same number of steps, deeper pre-LN stacks end slightly higher.", "seed 003 §2.1, table 2.1",
          "4.213 → 4.245 → 4.370", judge_depth_cost),
    Claim("adjacent_kl", "相邻位置输出分布的 KL：停住的 Post-LN 约 0.002，Pre-LN 约 0.15。",
          "Adjacent-position KL: the stalled post-LN model about 0.002, pre-LN about 0.15.", "seed 003 §2.17.3",
          "0.002 vs 0.15 (12 layers; healthy > 0.05)", judge_kl),
    Claim("attention_entropy", "健康模型的注意力熵（归一化）在 0.5–0.9。",
          "A healthy model's (normalised) attention entropy lies in 0.5-0.9.", "seed 003 §2.5.1, §2.18",
          "0.5-0.9 healthy; < 0.1 saturated; > 0.99 uniform (no per-head figures)", judge_entropy),
)


def plot(results, folder):
    depths = results["setting"]["depths"]
    keys = [f"{p}_L{d}" for d in depths for p in ("pre", "post")]
    series = {f"{p}-LN": finals(results, p) for p in ("pre", "post")}

    def style(key):  # colour: depth; solid: pre-LN, dashed: post-LN
        placement, depth = key.split("_L")
        return {"color": f"C{depths.index(int(depth))}", "linestyle": "-" if placement == "pre" else "--"}

    return [plot_curves(results, folder, "curves", keys, title="pre-LN (solid) and post-LN (dashed), lr 3e-3",
                        style=style),
            plot_finals(results, folder, "final_by_depth", depths, series, "layers", log_base=2)]


LAB = Lab("depth_placement", "深度 × 归一化位置", "depth × placement (pre/post-LN × 6/12/24 layers)",
          "学习率 3e-3、warmup 100 步时，6/12/24 层的 Post-LN 和 Pre-LN 各会停在哪里？先写下你的预测。",
          SETTINGS, runs, execute_training, CLAIMS, plot, order=1)

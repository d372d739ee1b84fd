"""Seed 003 §2.1 (experiment 1): pre-LN and post-LN stacks of 6, 12 and 24 layers at lr 3e-3."""

from .evidence import less, more, trained, within
from .runner import Claim, Lab, execute_training, final_grad_norm, fmt, one, plot_curves, plot_finals, settings, stalled, training_run

# the seed's case runs have no 1/sqrt(2N) scaling on either side (seed 003 §2.3.3)
SETTINGS = settings({"tiny": {"depths": [1, 2]}, "quick": {"depths": [6, 12, 24]}, "full": {"depths": [6, 12, 24]}})


def runs(setting):
    return [training_run(f"{placement}_L{depth}", setting, {"placement": placement, "scaled_init": False},
                         n_layers=depth, placement=placement)
            for depth in setting["depths"] for placement in ("pre", "post")]


def finals(results, placement):
    return [one(results, placement=placement, n_layers=d)["final_val"] for d in results["setting"]["depths"]]


def judge_stall(view):
    unigram = view["baselines"]["unigram"]
    pre, post = finals(view, "pre"), finals(view, "post")
    ours = (f"post-LN {', '.join(fmt(v) for v in post)}; pre-LN {', '.join(fmt(v) for v in pre)} "
            f"(depths {view['setting']['depths']}); held-out unigram {unigram:.3f}")
    return ours, [c for d, p, h in zip(view["setting"]["depths"], post, pre) for c in stalled(f"L{d}", p, unigram, h)]


def judge_same_loss(view):
    post = finals(view, "post")
    spread = None if None in post else max(post) - min(post)
    return f"post-LN spread over depths {fmt(spread)}", [less("post-LN spread over depths", spread, 0.05)]


def judge_depth_cost(view):
    pre, depths, unigram = finals(view, "pre"), view["setting"]["depths"], view["baselines"]["unigram"]
    checks = [trained(f"pre-LN L{d}", v, unigram) for d, v in zip(depths, pre)]
    checks += [more(f"pre-LN L{b} − L{a}", None if None in (x, y) else y - x, 0)
               for a, b, x, y in zip(depths, depths[1:], pre, pre[1:])]
    return f"pre-LN {' → '.join(fmt(v) for v in pre)}", checks


def judge_start(view):
    uniform = view["baselines"]["uniform"]
    first = {key: stored["result"]["first_loss"] for key, stored in view["runs"].items()}
    worst = max(abs(v - uniform) for v in first.values())
    return (f"first-step loss {min(first.values()):.3f} to {max(first.values()):.3f} over the {len(first)} runs "
            f"(ln V = {uniform:.3f})", [less("largest |first-step loss − ln V|", worst, 0.1)])


def judge_final_grad_norm(view):
    depths, unigram = view["setting"]["depths"], view["baselines"]["unigram"]
    runs = [one(view, placement="pre", n_layers=d) for d in depths]
    norms = [final_grad_norm(r) for r in runs]
    checks = [trained(f"pre-LN L{d}", r["final_val"], unigram) for d, r in zip(depths, runs)]
    checks += [less(f"pre-LN final gradient norm L{b} − L{a}", y - x, 0) for a, b, x, y in zip(depths, depths[1:], norms, norms[1:])]
    return f"pre-LN final gradient norm (last 20 steps) {' / '.join(f'{v:.3f}' for v in norms)} at {depths}", checks


def middle(view):
    depths = view["setting"]["depths"]
    return depths[len(depths) // 2]


def judge_kl(view):
    depth, unigram = middle(view), view["baselines"]["unigram"]
    pre, post = (one(view, placement=p, n_layers=depth).get("diagnostics", {}).get("adjacent_kl") for p in ("pre", "post"))
    return (f"{depth} layers: post-LN {fmt(post, 4)}, pre-LN {fmt(pre)}",
            [trained(f"pre-LN L{depth}", one(view, placement="pre", n_layers=depth)["final_val"], unigram),
             less(f"post-LN adjacent KL (L{depth})", post, 0.01), more(f"pre-LN adjacent KL (L{depth})", pre, 0.05)])


def judge_entropy(view):
    depth, unigram = middle(view), view["baselines"]["unigram"]
    found = {}
    for p in ("pre", "post"):
        run = one(view, placement=p, n_layers=depth)
        heads = [h for layer in run["diagnostics"]["attention_entropy"] for h in layer] if "diagnostics" in run else [None]
        found[p] = (min(heads), sum(heads) / len(heads), max(heads)) if None not in heads else (None, None, None)
    ours = "; ".join(f"{p}-LN min/mean/max {' / '.join(fmt(v, 2) for v in values)}" for p, values in found.items())
    pre = one(view, placement="pre", n_layers=depth)["final_val"]
    return (ours + f" ({depth} layers, every head)",
            [trained(f"pre-LN L{depth}", pre, unigram), *within(f"pre-LN mean head entropy (L{depth})", found["pre"][1], 0.5, 0.9)])


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
    Claim("start_at_ln_v", "每个深度、两种排布的 loss 起点都在 ln V ≈ 7.09 附近。",
          "Every run starts near ln V = 7.09, at every depth and placement.", "seed 003 table 2.1",
          "7.103 / 7.145 / 7.122 (pre-LN), 7.068 / 7.067 / 7.041 (post-LN) at 6 / 12 / 24 layers", judge_start),
    Claim("final_grad_norm_falls", "训练结束时 Pre-LN 的梯度范数随深度减小。",
          "At the end of training pre-LN's gradient norm is smaller the deeper the stack.", "seed 003 table 2.1",
          "0.496 / 0.429 / 0.332 at 6 / 12 / 24 layers", judge_final_grad_norm),
    Claim("adjacent_kl", "相邻位置输出分布的 KL：停住的 Post-LN 约 0.002，Pre-LN 约 0.15。",
          "Adjacent-position KL: the stalled post-LN model about 0.002, pre-LN about 0.15.", "seed 003 §2.17.3",
          "0.002 vs 0.15 (12 layers; healthy > 0.05)", judge_kl),
    Claim("attention_entropy", "健康模型的注意力熵（归一化）在 0.5–0.9。",
          "A healthy model's (normalised) attention entropy lies in 0.5-0.9.", "seed 003 §2.5.1, §2.18",
          "0.5-0.9 healthy; < 0.1 saturated; > 0.99 uniform (no per-head figures)", judge_entropy),
)


def plot(views, folder):
    depths = views[0]["setting"]["depths"]
    keys = [f"{p}_L{d}" for d in depths for p in ("pre", "post")]
    series = {f"{p}-LN": (lambda view, p=p: finals(view, p)) for p in ("pre", "post")}

    def style(key):  # colour: depth; solid: pre-LN, dashed: post-LN
        placement, depth = key.split("_L")
        return {"color": f"C{depths.index(int(depth))}", "linestyle": "-" if placement == "pre" else "--"}

    return [plot_curves(views, folder, "curves", keys, title="pre-LN (solid) and post-LN (dashed), lr 3e-3",
                        style=style),
            plot_finals(views, folder, "final_by_depth", depths, series, "layers", log_base=2)]


LAB = Lab("depth_placement", "深度 × 归一化位置", "depth × placement (pre/post-LN × 6/12/24 layers)",
          "学习率 3e-3、warmup 100 步时，6/12/24 层的 Post-LN 和 Pre-LN 各会停在哪里？先写下你的预测。",
          SETTINGS, runs, execute_training, CLAIMS, plot, order=1)

"""Seed 003 §2.4 (experiment 2): the learning-rate sweep, 1e-4 to 3e-3, both placements."""

from .runner import Claim, Lab, execute_training, fmt, one, plot_curves, plot_finals, settings, training_run

RATES = (1e-4, 3e-4, 1e-3, 3e-3)
# seed: 12 layers, 900 steps; quick: 6 layers (half the depth keeps it to minutes) and 600 steps,
# warmup 67 (the seed's 100 of 900): with fewer, the small learning rates have not yet reached the
# unigram baseline and the sweep cannot say where post-LN does best
SETTINGS = settings({"tiny": {"steps": 4, "rates": [1e-4, 3e-3]},
                     "quick": {"n_layers": 6, "steps": 600, "warmup_steps": 67, "rates": list(RATES)},
                     "full": {"n_layers": 12, "steps": 900, "rates": list(RATES)}})


def runs(setting):
    return [training_run(f"{placement}_lr{lr:g}", setting, {"placement": placement, "scaled_init": False},
                         max_lr=lr, placement=placement)
            for lr in setting["rates"] for placement in ("pre", "post")]


def finals(results, placement):
    return [one(results, placement=placement, max_lr=lr)["final_val"] for lr in results["setting"]["rates"]]


def table(results):
    s = results["setting"]
    return f"{s['n_layers']} layers, {s['steps']} steps: " + "; ".join(
        f"{lr:g}: pre {fmt(a)} post {fmt(b)}" for lr, a, b in zip(s["rates"], finals(results, "pre"), finals(results, "post")))


def judge_pre_monotone(results):
    pre = finals(results, "pre")
    return table(results), None not in pre and all(b < a for a, b in zip(pre, pre[1:]))


def best_post_rate(results):
    rates, post = results["setting"]["rates"], finals(results, "post")
    finite = [(v, lr) for v, lr in zip(post, rates) if v is not None]
    return min(finite)[1] if finite else None


def judge_post_collapses(results):
    rates, post = results["setting"]["rates"], finals(results, "post")
    if None in post:
        return table(results), False
    unigram = results["baselines"]["unigram"]
    return (f"post-LN at {rates[-1]:g}: {fmt(post[-1])}, at its best rate: {fmt(min(post))} (unigram {unigram:.3f}; "
            f"judged held from 0.3 worse)", best_post_rate(results) < rates[-1] and post[-1] > min(post) + 0.3)


def judge_post_best_rate(results):
    best = best_post_rate(results)
    return f"post-LN's best rate: {best:g} ({results['setting']['n_layers']} layers, {results['setting']['steps']} steps)", \
        best == 3e-4


def judge_close_at_3e4(results):
    if 3e-4 not in results["setting"]["rates"]:
        return "3e-4 not in this grid", None
    pre = one(results, placement="pre", max_lr=3e-4)["final_val"]
    post = one(results, placement="post", max_lr=3e-4)["final_val"]
    return f"pre {fmt(pre)}, post {fmt(post)}: gap {fmt(post - pre)}", abs(post - pre) < 0.1


def judge_best_vs_best(results):
    pre, post = [v for v in finals(results, "pre") if v is not None], [v for v in finals(results, "post") if v is not None]
    if not pre or not post:
        return "every run of a placement diverged", False
    best_pre, best_post = min(pre), min(post)
    return f"best pre-LN {best_pre:.3f}, best post-LN {best_post:.3f} ({table(results).split(':')[0]})", best_pre < best_post


CLAIMS = (
    Claim("pre_ln_monotone", "Pre-LN 的 loss 随学习率单调下降（到 3e-3 仍在改善）。",
          "Pre-LN improves monotonically with the learning rate, still improving at 3e-3.", "seed 003 §2.4",
          "4.897 / 4.703 / 4.549 / 4.408 at 1e-4 / 3e-4 / 1e-3 / 3e-3 (12 layers, 900 steps)", judge_pre_monotone),
    Claim("post_ln_collapses", "Post-LN 到 3e-3 急剧变差（比它的最佳学习率差得多）。",
          "Post-LN degrades sharply at 3e-3, far worse than at its best rate.", "seed 003 §2.4",
          "5.417 at 3e-3 against 4.732 at 3e-4", judge_post_collapses),
    Claim("post_ln_best_at_3e4", "Post-LN 的最佳学习率是 3e-4。", "Post-LN's best learning rate is 3e-4.",
          "seed 003 §2.4", "5.164 / 4.732 / 4.830 / 5.417 at 1e-4 / 3e-4 / 1e-3 / 3e-3", judge_post_best_rate),
    Claim("close_at_3e4", "学习率 3e-4 时两种放置几乎一样。", "At 3e-4 the two placements are about equal.",
          "seed 003 §2.4", "pre 4.703, post 4.732: gap 0.029", judge_close_at_3e4),
    Claim("best_vs_best", "各自最佳学习率下，Pre-LN 仍优于 Post-LN。",
          "Each at its best learning rate, pre-LN still beats post-LN.", "seed 003 §2.4", "4.408 vs 4.732",
          judge_best_vs_best),
)


def plot(results, folder):
    rates = results["setting"]["rates"]
    series = {f"{p}-LN": finals(results, p) for p in ("pre", "post")}
    title = f"{results['setting']['n_layers']} layers, {results['setting']['steps']} steps"
    keys = [f"{p}_lr{lr:g}" for lr in rates for p in ("pre", "post")]
    return [plot_finals(results, folder, "sweep", rates, series, "peak learning rate", log_base=10, title=title),
            plot_curves(results, folder, "curves", keys)]


LAB = Lab("lr_sweep", "学习率扫描", "learning-rate sweep (1e-4 … 3e-3, both placements)",
          "Post-LN 在哪个学习率最好？Pre-LN 呢？3e-3 时两者差多少？先写下你的预测。",
          SETTINGS, runs, execute_training, CLAIMS, plot, order=2)

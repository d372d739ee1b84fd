"""Seed 003 §2.4 (experiment 2): the learning-rate sweep, 1e-4 to 3e-3, both placements."""

from .evidence import less, more, within
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


def steps(values, rates, label, op):
    """A check per adjacent pair of rates: values[i+1] − values[i], `op` 0."""
    return [op(f"{label} {b:g} − {a:g}", None if None in (x, y) else y - x, 0)
            for a, b, x, y in zip(rates, rates[1:], values, values[1:])]


def judge_pre_monotone(view):
    return table(view), steps(finals(view, "pre"), view["setting"]["rates"], "pre-LN", less)


def judge_post_collapses(view):
    rates, post = view["setting"]["rates"], finals(view, "post")
    others = [v for v in post[:-1] if v is not None]
    worse = None if post[-1] is None or not others else post[-1] - min(others)
    return (f"post-LN at {rates[-1]:g}: {fmt(post[-1])}, at its best other rate: {fmt(min(others) if others else None)} "
            f"(unigram {view['baselines']['unigram']:.3f})",
            [more(f"post-LN at {rates[-1]:g} − its best other rate", worse, 0.3)])


def judge_post_best_rate(view):
    rates, post = view["setting"]["rates"], finals(view, "post")
    if 3e-4 not in rates:
        return "3e-4 not in this grid", []
    best = post[rates.index(3e-4)]
    return (table(view), [less(f"post-LN 3e-4 − {lr:g}", None if None in (best, v) else best - v, 0)
                          for lr, v in zip(rates, post) if lr != 3e-4])


def judge_close_at_3e4(view):
    if 3e-4 not in view["setting"]["rates"]:
        return "3e-4 not in this grid", []
    pre = one(view, placement="pre", max_lr=3e-4)["final_val"]
    post = one(view, placement="post", max_lr=3e-4)["final_val"]
    gap = None if None in (pre, post) else post - pre
    return f"pre {fmt(pre)}, post {fmt(post)}: gap {fmt(gap)}", within("post − pre at 3e-4", gap, -0.1, 0.1)


def judge_best_vs_best(view):
    pre, post = [v for v in finals(view, "pre") if v is not None], [v for v in finals(view, "post") if v is not None]
    gap = min(pre) - min(post) if pre and post else None
    return (f"best pre-LN {fmt(min(pre) if pre else None)}, best post-LN {fmt(min(post) if post else None)} "
            f"({table(view).split(':')[0]})", [less("best pre-LN − best post-LN", gap, 0)])


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


def plot(views, folder):
    setting = views[0]["setting"]
    series = {f"{p}-LN": (lambda view, p=p: finals(view, p)) for p in ("pre", "post")}
    title = f"{setting['n_layers']} layers, {setting['steps']} steps"
    keys = [f"{p}_lr{lr:g}" for lr in setting["rates"] for p in ("pre", "post")]
    return [plot_finals(views, folder, "sweep", setting["rates"], series, "peak learning rate", log_base=10, title=title),
            plot_curves(views, folder, "curves", keys)]


LAB = Lab("lr_sweep", "学习率扫描", "learning-rate sweep (1e-4 … 3e-3, both placements)",
          "Post-LN 在哪个学习率最好？Pre-LN 呢？3e-3 时两者差多少？先写下你的预测。",
          SETTINGS, runs, execute_training, CLAIMS, plot, order=2)

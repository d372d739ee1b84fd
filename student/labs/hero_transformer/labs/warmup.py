"""Seed 003 §2.9.3 (figure 2.3): warmup 0, 100 and 400 steps at lr 3e-3, both placements."""

from .evidence import less, trained
from .runner import Claim, Lab, execute_training, fmt, one, plot_curves, settings, stalled, training_run

# the seed's warmups are 0, 1/12 and 1/3 of its 1,200 steps; quick keeps the fractions of 300
SETTINGS = settings({"tiny": {"warmups": [0, 2]}, "quick": {"warmups": [0, 25, 100]},
                     "full": {"warmups": [0, 100, 400]}})


def runs(setting):
    return [training_run(f"{placement}_w{w}", setting, {"placement": placement, "scaled_init": False},
                         warmup_steps=w, placement=placement)
            for w in setting["warmups"] for placement in ("pre", "post")]


def finals(results, placement):
    return [one(results, placement=placement, warmup_steps=w)["final_val"] for w in results["setting"]["warmups"]]


def judge_post_stuck(view):
    """Held when every warmup leaves post-LN stalled and the warmups differ by under 0.05."""
    post, pre, unigram = finals(view, "post"), finals(view, "pre"), view["baselines"]["unigram"]
    spread = None if None in post else max(post) - min(post)
    checks = [less("post-LN spread over warmups", spread, 0.05)]
    for w, p, h in zip(view["setting"]["warmups"], post, pre):
        checks += stalled(f"warmup {w}", p, unigram, h)
    return f"post-LN {' / '.join(fmt(v) for v in post)} (unigram {unigram:.3f})", checks


def judge_pre_improves(view):
    pre, warmups, unigram = finals(view, "pre"), view["setting"]["warmups"], view["baselines"]["unigram"]
    checks = [trained(f"pre-LN warmup {w}", v, unigram) for w, v in zip(warmups, pre)]
    checks += [less(f"pre-LN warmup {b} − {a}", None if None in (x, y) else y - x, 0)
               for a, b, x, y in zip(warmups, warmups[1:], pre, pre[1:])]
    return f"pre-LN {' → '.join(fmt(v) for v in pre)}", checks


CLAIMS = (
    Claim("post_ln_ignores_warmup", "Post-LN 对 warmup 完全不敏感：三种 warmup 都停在 unigram 附近。",
          "Post-LN does not respond to warmup: every warmup ends near the unigram baseline.", "seed 003 §2.9.3",
          "5.356 / 5.357 / 5.357 at warmup 0 / 100 / 400 (12 layers, lr 3e-3)", judge_post_stuck),
    Claim("pre_ln_likes_warmup", "Pre-LN 的 warmup 越长越好（与“Pre-LN 不需要 warmup”的说法相反）。",
          "Pre-LN improves with a longer warmup (against 'pre-LN needs no warmup').", "seed 003 §2.9.3",
          "4.394 → 4.245 → 4.160", judge_pre_improves),
)


def plot(views, folder):
    keys = [f"{p}_w{w}" for w in views[0]["setting"]["warmups"] for p in ("pre", "post")]
    return [plot_curves(views, folder, "curves", keys, title="warmup steps at lr 3e-3")]


LAB = Lab("warmup", "warmup 的长短", "warmup length (the seed's 0 / 100 / 400 of 1,200 steps)",
          "warmup 能救回 lr=3e-3 的 Post-LN 吗？Pre-LN 需要 warmup 吗？先写下你的预测。",
          SETTINGS, runs, execute_training, CLAIMS, plot, order=5)

"""Seed 004's claim that a 12-layer post-LN stack at lr 3e-4 needs warmup, and pre-LN does not.

seed 004 says that in post-LN the gradient along the residual path passes through LayerNorm and
shrinks fast at 12 layers and lr 3e-4, "so it needs a warmup schedule", while pre-LN trains
stably without one.  The `warmup` lab tests warmup at seed 003's lr 3e-3 only; `seed004_demo`
used to dismiss this claim by citing seed 003's sweep, whose runs all had 100 warmup steps.  Here
both placements are trained at 12 layers and lr 3e-4 with no warmup and with the seed's (or
quick's proportional) warmup, without the scaled init as in seed 003's case runs.
"""

from .evidence import trained, within
from .runner import Claim, Lab, execute_training, fmt, one, plot_curves, settings, stalled, training_run

SETTINGS = settings({"tiny": {"warmups": [0, 1]}, "quick": {"n_layers": 12, "warmups": [0, 25]},
                     "full": {"n_layers": 12, "warmups": [0, 100]}}, max_lr=3e-4)


def runs(setting):
    return [training_run(f"{placement}_w{w}", setting, {"placement": placement, "scaled_init": False},
                         warmup_steps=w, placement=placement)
            for w in setting["warmups"] for placement in ("pre", "post")]


def final(view, placement, warmup):
    return one(view, placement=placement, warmup_steps=warmup)["final_val"]


def judge_post_needs_warmup(view):
    none, some = view["setting"]["warmups"]
    unigram = view["baselines"]["unigram"]
    cold, warm = final(view, "post", none), final(view, "post", some)
    return (f"post-LN, {view['setting']['n_layers']} layers, lr 3e-4: warmup {none} {fmt(cold)}, warmup {some} {fmt(warm)} "
            f"(unigram {unigram:.3f})", stalled(f"post-LN without warmup against warmup {some}", cold, unigram, warm))


def judge_pre_needs_none(view):
    none, some = view["setting"]["warmups"]
    cold, warm = final(view, "pre", none), final(view, "pre", some)
    return (f"pre-LN: warmup {none} {fmt(cold)}, warmup {some} {fmt(warm)}",
            [trained(f"pre-LN warmup {none}", cold, view["baselines"]["unigram"]),
             *within(f"pre-LN warmup {none} − warmup {some}", None if None in (cold, warm) else cold - warm, -0.05, 0.05)])


CLAIMS = (
    Claim("post_ln_needs_warmup", "12 层 Post-LN 在学习率 3e-4 下需要 warmup：不加 warmup 就训不动。",
          "A 12-layer post-LN stack at lr 3e-4 needs warmup: without it, it does not train.", "seed 004",
          "'needs a warmup schedule' (no figure)", judge_post_needs_warmup),
    Claim("pre_ln_needs_no_warmup", "Pre-LN 不加 warmup 也能稳定训练。", "Pre-LN trains stably without warmup.",
          "seed 004", "no figure; judged as 'no warmup ends within ±0.05 of the warmup run'", judge_pre_needs_none),
)


def plot(views, folder):
    keys = [f"{p}_w{w}" for w in views[0]["setting"]["warmups"] for p in ("pre", "post")]
    return [plot_curves(views, folder, "curves", keys, title="12 layers at lr 3e-4, with and without warmup")]


LAB = Lab("seed004_warmup", "seed 004：Post-LN 在 3e-4 下要不要 warmup", "seed 004: does 12-layer post-LN at lr 3e-4 need warmup?",
          "12 层、学习率 3e-4，不加 warmup 时 Post-LN 会停住吗？Pre-LN 呢？先写下你的预测。",
          SETTINGS, runs, execute_training, CLAIMS, plot, order=13)

"""Seed 003 §2.3.1, the first detour: "was it the data?"

The seed's 12-layer model (post-LN at lr 3e-3, stalled) was suspected of overfitting 250K
characters, so the corpus was made 4 times larger and its loss moved from 5.357 to 5.351: not
overfitting.  Here both placements train on chapter 8's training text and on a text 4 times as
long (the same text followed by the next Tang poems, cut to length, the same vocabulary), and
are evaluated on the same held-out poems; each trained model is also evaluated on the 1× training
text, so the held-out − training gap (what overfitting would show) is measured, not inferred.
"""

from dataclasses import replace

from .. import train as loop
from . import variants
from .evidence import NOT_SEED_CONFIG, Check, less, report, within
from .runner import (Claim, Lab, extended_train, fmt, one, plot_finals, settings, stalled, train_variant,
                     training_run)

SETTINGS = settings({"quick": {"n_layers": 12}, "full": {"n_layers": 12}}, data_factors=[1, 4])


def runs(setting):
    # as seed 003's case runs: no scaled init
    return [training_run(f"{placement}_x{factor}", setting, {"placement": placement, "scaled_init": False},
                         placement=placement, data_factor=factor)
            for factor in setting["data_factors"] for placement in ("pre", "post")]


def execute(run, setting, context):
    factor = run.params["data_factor"]
    data = context.data
    train = extended_train(data["source"], factor) if factor != 1 else data["train"]
    result, model = train_variant(setting, replace(context, data={**data, "train": train}),
                                  variants.Variant(**run.params["variant"]), keep_model=True)
    result["data_ratio"] = len(train) / len(data["train"])
    result["train_eval"] = loop.evaluate(model, data["train"].to(context.device), setting["block_size"],
                                         setting["batch_size"])
    return result


def run_of(view, placement, factor):
    return one(view, placement=placement, data_factor=factor)


def final(view, placement, factor):
    return run_of(view, placement, factor)["final_val"]


def more_text(view):
    """The precondition: the larger text really is that much larger (the fixture has no more poems)."""
    small, large = view["setting"]["data_factors"]
    ratio = run_of(view, "post", large)["data_ratio"]
    return Check(f"training text, {large}× run / {small}× run", ratio, ">", large - 0.01, regime=NOT_SEED_CONFIG, exact=True)


def change(view, placement):
    small, large = view["setting"]["data_factors"]
    a, b = final(view, placement, small), final(view, placement, large)
    return None if None in (a, b) else b - a


def judge_no_help(view):
    small, large = view["setting"]["data_factors"]
    unigram = view["baselines"]["unigram"]
    return (f"post-LN {view['setting']['n_layers']} layers: {fmt(final(view, 'post', small))} on {small}×, "
            f"{fmt(final(view, 'post', large))} on {large}× (unigram {unigram:.3f}); pre-LN {fmt(final(view, 'pre', small))} "
            f"and {fmt(final(view, 'pre', large))}",
            [more_text(view), *stalled("post-LN (1×) against pre-LN", final(view, "post", small), unigram,
                                       final(view, "pre", small)),
             *within(f"post-LN {large}× − {small}×", change(view, "post"), -0.05, 0.05),
             report(f"pre-LN {large}× − {small}×", change(view, "pre"))])


def overfit_gap(view, placement, factor):
    run = run_of(view, placement, factor)
    return None if run["final_val"] is None else run["final_val"] - run["train_eval"]


def judge_not_overfitting(view):
    small, _ = view["setting"]["data_factors"]
    post, pre = overfit_gap(view, "post", small), overfit_gap(view, "pre", small)
    return (f"held-out − training loss on the {small}× text: post-LN {fmt(post)}, pre-LN {fmt(pre)}",
            [less(f"post-LN held-out − training loss ({small}×)", post, 0.05),
             report(f"pre-LN held-out − training loss ({small}×)", pre)])


CLAIMS = (
    Claim("more_data_does_not_help", "语料扩到 4 倍，12 层模型的 loss 几乎不变：问题不在数据。",
          "Four times the text leaves the 12-layer model's loss almost where it was: the data is not the problem.",
          "seed 003 §2.3.1", "5.357 → 5.351 (one seed)", judge_no_help),
    Claim("stalled_model_not_overfitting", "不是过拟合：停住的模型在训练文本和 held-out 上的 loss 一样。",
          "Not overfitting: the stalled model's loss is the same on its training text and on the held-out text.",
          "seed 003 §2.3.1", "inferred from the 0.006 change; no train/held-out figures", judge_not_overfitting),
)


def plot(views, folder):
    factors = views[0]["setting"]["data_factors"]
    return [plot_finals(views, folder, "finals", factors,
                        {p: (lambda view, p=p: [final(view, p, f) for f in factors]) for p in ("pre", "post")},
                        "training text (× chapter 8's)", title="more text, the same held-out poems")]


LAB = Lab("more_data", "弯路一：是不是数据太少", "the first detour: was it the data? (§2.3.1)",
          "把训练语料扩到 4 倍，停住的 12 层 Post-LN 会好多少？Pre-LN 呢？先写下你的预测。",
          SETTINGS, runs, execute, CLAIMS, plot, order=18)

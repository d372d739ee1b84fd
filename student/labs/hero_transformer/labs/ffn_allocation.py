"""Seed 003 §2.14.2-3: how much of a block should the FFN be?  Two grids of 4-layer models.

First the width stays at d_model 128 and d_ff grows (128, 256, 512): the FFN's share of a block
grows and so does the model.  Then the total stays at about 690K parameters (the seed's tied-head
count) while d_model and d_ff move against each other (96 / 552, 112 / 392, 128 / 256): only the
share moves.  The seed ran two seeds of each and concluded that the second grid's differences
(0.05) are smaller than its seed-to-seed spread (0.2).
"""

from .evidence import equal, less, within
from .runner import VOCAB_SIZE, Claim, Lab, config, execute_training, fmt, one, plot_finals, settings, training_run

# the seed: 4 layers, d_model 128 unless the grid says otherwise; quick keeps the widths (they are
# the question) and shortens the training
SETTINGS = settings({"tiny": {"widths": [[16, 16], [16, 32]], "same_size": [[16, 32]]},
                     "quick": {"widths": [[128, 128], [128, 256], [128, 512]],
                               "same_size": [[96, 552], [112, 392], [128, 256]], "batch_size": 16},
                     "full": {"widths": [[128, 128], [128, 256], [128, 512]],
                              "same_size": [[96, 552], [112, 392], [128, 256]]}}, n_layers=4)
SEED_WIDTHS = {128: 4.3199, 256: 4.1761, 512: 4.0254}  # mean of two seeds, d_model 128
SEED_SAME_SIZE = {(96, 552): 4.1551, (112, 392): 4.1237, (128, 256): 4.1761}


def shapes(setting):
    return list(dict.fromkeys(tuple(pair) for pair in setting["widths"] + setting["same_size"]))


def runs(setting):
    return [training_run(f"d{d}_f{f}", setting, d_model=d, d_ff=f) for d, f in shapes(setting)]


def seed_parameters(d, f, n_layers=4, vocab=VOCAB_SIZE, positions=64):
    """The seed's count: a tied head, 64 positions (seed 003 §2.14.1's formula)."""
    block = 4 * d * d + 2 * d * f + f + d + 4 * d
    return n_layers * block + vocab * d + positions * d + 2 * d


def ffn_share(d, f):
    return 2 * d * f / (4 * d * d + 2 * d * f + 4 * d)


def losses(view, key):
    return [one(view, d_model=d, d_ff=f)["final_val"] for d, f in view["setting"][key]]


def judge_widths(view):
    values, pairs = losses(view, "widths"), view["setting"]["widths"]
    return (f"d_model 128, d_ff {' / '.join(str(f) for _, f in pairs)}: {' / '.join(fmt(v) for v in values)}",
            [less(f"d_ff {b[1]} − d_ff {a[1]}", None if None in (x, y) else y - x, 0)
             for a, b, x, y in zip(pairs, pairs[1:], values, values[1:])])


def judge_same_size(view):
    values, pairs = losses(view, "same_size"), view["setting"]["same_size"]
    base = values[-1]
    checks = []
    for (d, f), v in zip(pairs[:-1], values[:-1]):
        checks += within(f"FFN {ffn_share(d, f):.1%} − {ffn_share(*pairs[-1]):.1%}", None if None in (v, base) else v - base,
                         -0.05, 0.05)
    return (" / ".join(f"d {d} f {f} ({ffn_share(d, f):.1%}): {fmt(v)}" for (d, f), v in zip(pairs, values)), checks)


def judge_ledger(view):
    counted = {(d, f): seed_parameters(d, f) for d, f in shapes(SETTINGS["full"])}
    seed = {(128, 128): 558_336, (128, 256): 689_920, (128, 512): 953_088, (96, 552): 697_056, (112, 392): 697_536}
    return (", ".join(f"d {d} f {f}: {n:,}" for (d, f), n in counted.items()),
            [equal("largest difference from the seed's parameter counts", float(max(abs(counted[k] - seed[k]) for k in seed)),
                   0.0)])


CLAIMS = (
    Claim("more_ffn_lower_loss", "固定 d_model = 128，d_ff 从 128 加到 512，loss 单调下降（但参数也在增加）。",
          "At d_model 128, d_ff 128 → 256 → 512 lowers the loss step by step (the model grows too).",
          "seed 003 §2.14.2", "4.3199 / 4.1761 / 4.0254 (two seeds each)", judge_widths),
    Claim("allocation_within_noise", "总参数固定时，FFN 占 50%、63%、74% 的差别小于换随机种子的差别。",
          "At a fixed total, an FFN share of 50%, 63% or 74% changes the loss by less than a change of seed.",
          "seed 003 §2.14.3", "4.1761 / 4.1237 / 4.1551: spread 0.05 against a seed-to-seed spread of 0.196; judged "
          "as 'each difference within ±0.05'", judge_same_size),
    Claim("parameter_counts", "各档的总参数（共享输出头、64 个位置）。", "The grids' total parameters (tied head, 64 positions).",
          "seed 003 §2.14.2-3", "558,336 / 689,920 / 953,088; 697,056 / 697,536 / 689,920", judge_ledger),
)


def plot(views, folder):
    setting = views[0]["setting"]
    shares = [ffn_share(d, f) for d, f in setting["same_size"]]
    return [plot_finals(views, folder, "same_size", shares, {"about 690K parameters": lambda v: losses(v, "same_size")},
                        "FFN share of a block", title="fixed total parameters, 4 layers"),
            plot_finals(views, folder, "widths", [f for _, f in setting["widths"]],
                        {"d_model 128": lambda v: losses(v, "widths")}, "d_ff", log_base=2, title="fixed width, 4 layers")]


LAB = Lab("ffn_allocation", "FFN 该占多少", "how much of a block the FFN should be (d_ff at a fixed width, and at a fixed total)",
          "总参数固定在约 69 万、4 层时，FFN 占一块的 50%、63%、74%，哪个 loss 最低？差别比换一个随机种子大吗？先写下你的预测。",
          SETTINGS, runs, execute_training, CLAIMS, plot, order=8)

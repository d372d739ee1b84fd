"""Seed 003 §2.12.4 (experiment 5, table 2.2): context length, and the noise floor between runs.

Five runs differ only in context length (each evaluated at its own length), each repeated on every
seed, so that the table's differences are read against the noise that a change of seed alone
makes, and that noise is itself measured (pooled over the five lengths)."""

import math

from .evidence import Check, more, sd_interval, trained
from .runner import Claim, Lab, execute_training, fmt, one, plot_finals, settings, training_run

SETTINGS = settings({"tiny": {"contexts": [8, 16]},
                     "quick": {"n_layers": 4, "contexts": [8, 16, 32, 64, 128], "block_size": 128},
                     "full": {"n_layers": 4, "steps": 800, "contexts": [8, 16, 32, 64, 128], "block_size": 128}})


def runs(setting):
    return [training_run(f"T{t}", setting, train_length=t) for t in setting["contexts"]]


def finals(view):
    return [one(view, train_length=t)["final_val"] for t in view["setting"]["contexts"]]


def judge_longer_helps(view):
    """Held when the longest context improves on the shortest by at least half the seed's 0.64."""
    values, contexts = finals(view), view["setting"]["contexts"]
    gain = None if None in (values[0], values[-1]) else values[0] - values[-1]
    return (f"{' / '.join(fmt(v) for v in values)} at {contexts}: shortest − longest {fmt(gain)}",
            [trained(f"T{contexts[-1]}", values[-1], view["baselines"]["unigram"]),
             more(f"T{contexts[0]} − T{contexts[-1]}", gain, 0.32)])


def judge_16_vs_8(view):
    if not {8, 16} <= set(view["setting"]["contexts"]):
        return "8 and 16 not both in this grid", []
    a, b = (one(view, train_length=t)["final_val"] for t in (8, 16))
    return f"8: {fmt(a)}, 16: {fmt(b)}", [more("T16 − T8", None if None in (a, b) else b - a, 0)]


def judge_noise(views):
    """Pooled over the contexts: the seed-to-seed sigma of a final loss (chi-square interval), read
    as the typical difference between two single runs, E|X1 − X2| = 2 sigma / sqrt(pi)."""
    by_context = [[v for v in values if v is not None] for values in zip(*(finals(view) for view in views))]
    residuals = sum(sum((v - sum(vs) / len(vs)) ** 2 for v in vs) for vs in by_context if len(vs) > 1)
    dof = sum(len(vs) - 1 for vs in by_context if len(vs) > 1)
    if dof == 0 or residuals == 0:
        return "one seed: no spread", [Check("typical difference between two runs", None, ">", 0.1)]
    sigma, low, high = sd_interval(residuals, dof)
    typical = 2 / math.sqrt(math.pi)
    ours = (f"seed-to-seed sigma {sigma:.3f} (pooled over {len(by_context)} contexts, {dof} degrees of freedom); "
            f"typical difference between two runs {typical * sigma:.3f}")
    return ours, [Check("typical difference between two runs (low end)", typical * sigma, ">", 0.1,
                        interval=(typical * low, typical * high)),
                  Check("typical difference between two runs (high end)", typical * sigma, "<", 0.2,
                        interval=(typical * low, typical * high))]


CLAIMS = (
    Claim("longer_context_helps", "上下文从 8 到 128，loss 改善约 0.64：任务确实用到较长上下文。",
          "From context 8 to 128 the loss improves by about 0.64: the task uses longer context.",
          "seed 003 §2.12.4, table 2.2", "4.846 / 4.971 / 4.611 / 4.275 / 4.209 at 8 / 16 / 32 / 64 / 128",
          judge_longer_helps),
    Claim("sixteen_worse_than_eight", "16 比 8 还差（单次运行的噪声）。",
          "Context 16 ends worse than 8 (single-run noise).", "seed 003 §2.12.4", "4.971 vs 4.846", judge_16_vs_8),
    Claim("noise_floor", "单次训练的噪声在 0.1–0.2 量级。", "A single run's noise is 0.1-0.2 nats.",
          "seed 003 §2.12.4, §2.14", "0.125 (16 vs 8); two-seed spreads 0.025 / 0.196 / 0.019 in §2.14",
          judge_noise, pooled=True),
)


def plot(views, folder):
    contexts = views[0]["setting"]["contexts"]
    return [plot_finals(views, folder, "context", contexts, {"final loss": finals},
                        "context length (trained and evaluated)", log_base=2)]


LAB = Lab("context_noise", "上下文长度与噪声底", "context length and the noise floor between runs",
          "上下文从 8 加到 128，loss 会改善多少？只换随机种子，loss 会差多少？先写下你的预测。",
          SETTINGS, runs, execute_training, CLAIMS, plot, order=9)

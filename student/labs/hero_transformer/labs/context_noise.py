"""Seed 003 §2.12.4 (experiment 5, table 2.2): context length, and the noise floor between runs.

Five runs differ only in context length (each evaluated at its own length); three more repeat the
64-position run with other seeds, so the table's differences can be read against the noise that a
change of seed alone makes."""

from .runner import Claim, Lab, execute_training, fmt, one, plot_finals, settings, training_run

SETTINGS = settings({"tiny": {"contexts": [8, 16], "noise_seeds": [1], "noise_context": 16},
                     "quick": {"n_layers": 4, "contexts": [8, 16, 32, 64, 128], "noise_seeds": [1, 2],
                               "noise_context": 64, "block_size": 128},
                     "full": {"n_layers": 4, "steps": 800, "contexts": [8, 16, 32, 64, 128], "noise_seeds": [1, 2],
                              "noise_context": 64, "block_size": 128}})


def runs(setting):
    found = [training_run(f"T{t}", setting, train_length=t, seed=setting["seed"]) for t in setting["contexts"]]
    found += [training_run(f"T{setting['noise_context']}_s{s}", setting, train_length=setting["noise_context"], seed=s)
              for s in setting["noise_seeds"]]
    return found


def finals(results):
    s = results["setting"]
    return [one(results, train_length=t, seed=s["seed"])["final_val"] for t in s["contexts"]]


def seed_values(results):
    s = results["setting"]
    return [one(results, train_length=s["noise_context"], seed=seed)["final_val"]
            for seed in [s["seed"], *s["noise_seeds"]]]


def judge_longer_helps(results):
    """Held when the longest context improves on the shortest by at least half the seed's 0.64."""
    values = finals(results)
    return (f"{' / '.join(fmt(v) for v in values)} at {results['setting']['contexts']}: "
            f"shortest − longest {values[0] - values[-1]:.3f} (judged held from 0.32)", values[-1] < values[0] - 0.32)


def judge_noise(results):
    values = seed_values(results)
    spread = max(values) - min(values)
    return (f"{len(values)} seeds at {results['setting']['noise_context']}: {' / '.join(fmt(v) for v in values)}, "
            f"spread {spread:.3f}", 0.1 <= spread <= 0.2)


def judge_16_vs_8(results):
    if 8 not in results["setting"]["contexts"] or 16 not in results["setting"]["contexts"]:
        return "8 and 16 not both in this grid", None
    a, b = (one(results, train_length=t, seed=results["setting"]["seed"])["final_val"] for t in (8, 16))
    return f"8: {fmt(a)}, 16: {fmt(b)}", b > a


CLAIMS = (
    Claim("longer_context_helps", "上下文从 8 到 128，loss 改善约 0.64：任务确实用到较长上下文。",
          "From context 8 to 128 the loss improves by about 0.64: the task uses longer context.",
          "seed 003 §2.12.4, table 2.2", "4.846 / 4.971 / 4.611 / 4.275 / 4.209 at 8 / 16 / 32 / 64 / 128",
          judge_longer_helps),
    Claim("sixteen_worse_than_eight", "16 比 8 还差（单次运行的噪声）。",
          "Context 16 ends worse than 8 (single-run noise).", "seed 003 §2.12.4", "4.971 vs 4.846", judge_16_vs_8),
    Claim("noise_floor", "单次训练的噪声在 0.1–0.2 量级。", "A single run's noise is 0.1-0.2 nats.",
          "seed 003 §2.12.4, §2.14", "0.125 (16 vs 8); two-seed spreads 0.025 / 0.196 / 0.019 in §2.14",
          judge_noise),
)


def plot(results, folder):
    s = results["setting"]
    seeds = seed_values(results)

    def other_seeds(ax):
        ax.plot([s["noise_context"]] * len(seeds), seeds, "x", color="C3", markersize=8, label="every seed")

    return [plot_finals(results, folder, "context", s["contexts"], {f"seed {s['seed']}": finals(results)},
                        "context length (trained and evaluated)", log_base=2, extra=other_seeds)]


LAB = Lab("context_noise", "上下文长度与噪声底", "context length and the noise floor between runs",
          "上下文从 8 加到 128，loss 会改善多少？只换随机种子，loss 会差多少？先写下你的预测。",
          SETTINGS, runs, execute_training, CLAIMS, plot, order=9)

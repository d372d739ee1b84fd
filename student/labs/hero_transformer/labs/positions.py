"""Seed 003 §2.12 (experiment 4): learned positions, RoPE and RoPE-NTK, trained on 64 positions and
evaluated on 64, 128 and 256.

Three models are trained, as in the seed: learned positions, RoPE (base 10,000) and the seed's
"rope_ntk" (RoPE with the base enlarged 4×, trained so).  Each is then read more than one way:
learned positions past 64 either read their untrained rows or repeat row 63 (the seed's clamp);
RoPE is also evaluated with NTK-aware scaling (base × s^(d_h/(d_h-2)) at s times the training
length), which is how NTK scaling is usually applied: at inference, to a model trained without it."""

from .. import train as loop
from . import variants
from .evidence import more, report, trained
from .runner import Claim, Lab, Run, fmt, plot_finals, settings, train_variant

SETTINGS = settings({"tiny": {"train_length": 8, "lengths": [8, 16]},
                     "quick": {"n_layers": 4, "train_length": 64, "lengths": [64, 128, 256]},
                     "full": {"n_layers": 4, "steps": 2000, "train_length": 64, "lengths": [64, 128, 256]}})

TRAINED = {"learned": {"positions": "learned"}, "rope": {"positions": "rope"},
           "rope_base4x": {"positions": "rope", "rope_base": 40000.0}}
# how each trained model is read at evaluation: (trained model, the variant's changes)
READINGS = {"learned": ("learned", {}), "learned_clamped": ("learned", {"position_limit": "train"}),
            "rope": ("rope", {}), "rope_ntk_scaled": ("rope", {"positions": "rope_ntk", "train_length": "train"}),
            "rope_base4x": ("rope_base4x", {})}


def runs(setting):
    return [Run(name, {"model": name, **changes}, cost=setting["steps"]) for name, changes in TRAINED.items()]


def execute(run, setting, context):
    data = context.data
    variant = variants.Variant(**{k: v for k, v in run.params.items() if k != "model"})
    block = max(setting["lengths"])
    result, model = train_variant(setting, context, variant, keep_model=True, block_size=block)
    result["eval"] = {}
    val = data["val"].to(context.device)
    for reading, (trained, changes) in READINGS.items():
        if trained != run.params["model"]:
            continue
        changes = {k: setting["train_length"] if v == "train" else v for k, v in changes.items()}
        variants.retarget(model, **changes)
        result["eval"][reading] = {str(n): loop.evaluate(model, val, n, setting["batch_size"])
                                   for n in setting["lengths"]}
        variants.retarget(model, **{k: getattr(variant, k) for k in changes})
    return result


def losses(results):
    """{reading: [loss at each length]}"""
    found = {}
    for run in results["runs"].values():
        for reading, by_length in run["result"]["eval"].items():
            found[reading] = [by_length[str(n)] for n in results["setting"]["lengths"]]
    return {name: found[name] for name in READINGS if name in found}


def table(results, names):
    found = losses(results)
    lengths = " / ".join(str(n) for n in results["setting"]["lengths"])
    return f"at {lengths}: " + "; ".join(f"{name} {' / '.join(fmt(v) for v in found[name])}" for name in names)


def regime(view):
    """Every trained model clearly below the unigram baseline at the training length: a claim
    about extrapolation needs models that learned something to extrapolate."""
    found, unigram = losses(view), view["baselines"]["unigram"]
    return [trained(f"{name} at {view['setting']['lengths'][0]}", found[name][0], unigram) for name in TRAINED]


def judge_rope_at_2x(view):
    found = losses(view)
    return (table(view, ("learned_clamped", "rope")),
            [*regime(view), more("learned_clamped − rope at 2× length", found["learned_clamped"][1] - found["rope"][1], 0)])


def judge_learned_at_4x(view):
    found = losses(view)
    if len(view["setting"]["lengths"]) < 3:
        return "no 4× length in this grid", []
    return (table(view, ("learned_clamped", "rope")),
            [*regime(view), more("rope − learned_clamped at 4× length", found["rope"][2] - found["learned_clamped"][2], 0)])


def judge_ntk(view):
    found = losses(view)
    return (table(view, ("rope", "rope_base4x", "rope_ntk_scaled")),
            [*regime(view), *[more(f"rope_base4x − rope at {n}", a - b, 0)
                              for n, a, b in zip(view["setting"]["lengths"], found["rope_base4x"], found["rope"])]])


def judge_untrained_rows(view):
    found = losses(view)
    return (table(view, ("learned", "learned_clamped")),
            [report(f"learned − learned_clamped at {n}", a - b)
             for n, a, b in zip(view["setting"]["lengths"][1:], found["learned"][1:], found["learned_clamped"][1:])])


CLAIMS = (
    Claim("rope_better_at_128", "在 2 倍训练长度（128）上，RoPE 优于可学习位置。",
          "At twice the training length (128) RoPE beats learned positions.", "seed 003 §2.12.2",
          "4.2074 vs 4.5550 (learned clamped at 63)", judge_rope_at_2x),
    Claim("learned_better_at_256", "在 4 倍训练长度（256）上，可学习位置反而优于 RoPE。",
          "At four times the training length (256) learned positions beat RoPE.", "seed 003 §2.12.2",
          "4.8521 vs 4.9341", judge_learned_at_4x),
    Claim("ntk_worse", "NTK（基数放大 4 倍）在三个长度上都不如标准 RoPE。",
          "NTK (base enlarged 4×) is worse than plain RoPE at every length.", "seed 003 §2.12.2",
          "3.9554 / 4.3376 / 5.0870 vs 3.8988 / 4.2074 / 4.9341", judge_ntk),
    Claim("untrained_rows", "可学习位置超出训练长度后：读未训练的行，还是重复第 63 行？",
          "Learned positions past the training length: untrained rows, or row 63 repeated?", "seed 003 §2.12.5",
          "the seed clamps to row 63 and calls it cheating", judge_untrained_rows),
)


def plot(views, folder):
    def training_length(ax):
        ax.axvline(views[0]["setting"]["train_length"], color="grey", linestyle=":", label="training length")

    series = {name: (lambda view, name=name: losses(view)[name]) for name in losses(views[0])}
    return [plot_finals(views, folder, "extrapolation", views[0]["setting"]["lengths"], series,
                        "evaluation length", log_base=2, ylabel="held-out loss", extra=training_length)]


LAB = Lab("positions", "位置编码的外推", "learned, RoPE and RoPE-NTK positions beyond the training length",
          "只在长度 64 上训练，到 128 和 256 时三种位置编码谁最好？先写下你的预测。",
          SETTINGS, runs, execute, CLAIMS, plot, order=8)

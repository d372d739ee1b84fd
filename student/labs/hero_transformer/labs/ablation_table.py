"""Seed 003 §2.17.5's ablation table, one switch off at a time, with §2.15.5, §2.15.6 and §2.25.1.

The course model (pre-LN, scaled init) is trained next to copies with one part removed or
changed: no residual connections, no LayerNorm anywhere, no final LayerNorm, no scaled init, no
position information, a LayerNorm on the stream before every block (§2.15.6's "writing B"), and
8 heads instead of 4 (§2.25.1's exercise).  The table's fifth row, weight tying, runs the other
way round: the course model's head is untied, so the copy ties it to the token embedding.  Each
trained model is also read with its attention output projection W_O zeroed (§2.15.5's check that
it is used) and with its prefix shuffled (how much it reads the order of the characters).
"""

import torch

from .. import train as loop
from .evidence import equal, less, more, report, trained, within
from .runner import Claim, Lab, Run, fmt, final_grad_norm, plot_curves, sample_batch, settings, stalled, train_run

SETTINGS = settings()
CASES = {
    "course": {},
    "no_residual": {"residual": False},
    "no_layernorm": {"norm": "none"},
    "no_ln_f": {"final_norm": "none"},
    "no_scaled_init": {"scaled_init": False},
    "no_positions": {"positions": "none"},
    "block_norm": {"block_norm": True},
    "tied_head": {"tied_head": True},
    "heads_8": {},  # the same model with n_heads 8
}
OVERRIDES = {"heads_8": {"n_heads": 8}}


def runs(setting):
    return [Run(name, {"case": name, "variant": changes, **OVERRIDES.get(name, {})}, cost=setting["steps"])
            for name, changes in CASES.items()]


def order_sensitivity(model, idx):
    """Mean KL(p || p') of the next-character distribution at the last position when the
    characters before it are shuffled (the last one kept): 0 for a model blind to order."""
    generator = torch.Generator().manual_seed(0)
    shuffled = idx.clone()
    shuffled[:, :-1] = idx[:, torch.randperm(idx.shape[1] - 1, generator=generator)]
    with torch.no_grad():
        p = torch.log_softmax(model(idx).logits[:, -1].double(), -1)
        q = torch.log_softmax(model(shuffled).logits[:, -1].double(), -1)
    return (p.exp() * (p - q)).sum(-1).mean().item()


def execute(run, setting, context):
    data = context.data
    result, model = train_run(run, setting, context, keep_model=True)  # overrides: n_heads only
    idx, _ = sample_batch(data, setting["block_size"], setting["batch_size"], setting["seed"], context.device)
    model.eval()
    with torch.no_grad():
        result["logit_std"] = model(idx).logits.std().item()
    result["order_sensitivity"] = order_sensitivity(model, idx)
    val = data["val"].to(context.device)
    silenced = [block.attention.proj.register_forward_hook(lambda module, inputs, output: torch.zeros_like(output))
                for block in model.blocks]
    try:
        result["val_without_w_o"] = loop.evaluate(model, val, setting["block_size"], setting["batch_size"])
    finally:
        for hook in silenced:
            hook.remove()
    return result


def final(view, case):
    return view["runs"][case]["result"]["final_val"]


def gap(view, case):
    a, b = final(view, case), final(view, "course")
    return None if None in (a, b) else a - b


def trained_course(view):
    return trained("the course model", final(view, "course"), view["baselines"]["unigram"])


def judge_residual(view):
    unigram = view["baselines"]["unigram"]
    return (f"without residuals {fmt(final(view, 'no_residual'))}, course model {fmt(final(view, 'course'))} "
            f"(unigram {unigram:.3f})", stalled("no residuals", final(view, "no_residual"), unigram, final(view, "course")))


def judge_layernorm(view):
    return (f"without any LayerNorm {fmt(final(view, 'no_layernorm'))}, course model {fmt(final(view, 'course'))}",
            [trained_course(view), more("no LayerNorm − course model", gap(view, "no_layernorm"), 0)])


def judge_ln_f(view):
    runs = view["runs"]
    ratio = runs["no_ln_f"]["result"]["logit_std"] / runs["course"]["result"]["logit_std"]
    return (f"logit std without ln_f {runs['no_ln_f']['result']['logit_std']:.2f}, with {runs['course']['result']['logit_std']:.2f}",
            [more("logit std, no ln_f / course model", ratio, 1)])


def judge_scaled_init(view):
    depth = view["setting"]["n_layers"]
    return (f"{depth} layers: without the scaled init {fmt(final(view, 'no_scaled_init'))}, with {fmt(final(view, 'course'))}",
            [trained_course(view), *within(f"no scaled init − course model ({depth} layers)", gap(view, "no_scaled_init"),
                                           -0.05, 0.05)])


def judge_positions(view):
    runs = view["runs"]
    blind, course = (runs[c]["result"]["order_sensitivity"] for c in ("no_positions", "course"))
    return (f"shuffling the prefix moves the last prediction by KL {blind:.3f} without positions, {course:.3f} with; "
            f"held-out {fmt(final(view, 'no_positions'))} against {fmt(final(view, 'course'))}",
            [trained_course(view), less("order sensitivity, no positions / course model", blind / course, 0.1)])


def judge_block_norm(view):
    runs = view["runs"]
    norms = [final_grad_norm(runs[c]["result"]) for c in ("block_norm", "course")]
    return (f"a LayerNorm before every block: {fmt(final(view, 'block_norm'))} against {fmt(final(view, 'course'))}; "
            f"final gradient norm {norms[0]:.3f} against {norms[1]:.3f}",
            [trained_course(view), more("block norm − course model", gap(view, "block_norm"), 0),
             less("final gradient norm, block norm / course model", norms[0] / norms[1], 1)])


def judge_tying(view):
    runs = view["runs"]
    untied, tied = (runs[c]["result"]["parameters"] for c in ("course", "tied_head"))
    tying_helps = gap(view, "tied_head")  # tied − untied
    return (f"untied (the course model) {fmt(final(view, 'course'))}, tied {fmt(final(view, 'tied_head'))}; "
            f"parameters {untied:,} against {tied:,}",
            [trained_course(view), report("parameters added by untying (% of the tied model)", 100 * (untied - tied) / tied),
             more("untied − tied (loss)", None if tying_helps is None else -tying_helps, 0)])


def judge_w_o(view):
    run = view["runs"]["course"]["result"]
    change = None if run["final_val"] is None else run["val_without_w_o"] - run["final_val"]
    return (f"course model held-out {fmt(run['final_val'])}, with W_O's output zeroed {fmt(run['val_without_w_o'])}",
            [trained_course(view), more("held-out loss, W_O zeroed − course model", change, 0.05)])


def judge_heads(view):
    runs = view["runs"]
    same = runs["heads_8"]["result"]["parameters"] - runs["course"]["result"]["parameters"]
    return (f"8 heads {fmt(final(view, 'heads_8'))} against 4 heads {fmt(final(view, 'course'))}; parameters "
            f"{runs['heads_8']['result']['parameters']:,} and {runs['course']['result']['parameters']:,}",
            [equal("parameters, 8 heads − 4 heads", float(same), 0.0), report("8 heads − 4 heads (loss)", gap(view, "heads_8"))])


CLAIMS = (
    Claim("no_residual_collapses", "关掉残差：立刻崩。", "Residuals off: it collapses at once.", "seed 003 §2.17.5 (row 1)",
          "collapses ('2 layers do not train' in §2.7)", judge_residual),
    Claim("no_layernorm_slower", "关掉 LayerNorm：loss 抖动、收敛慢。", "LayerNorm off: the loss jitters and converges slowly.",
          "seed 003 §2.17.5 (row 2)", "no figure", judge_layernorm),
    Claim("no_ln_f_larger_logits", "关掉 ln_f：logits 尺度偏大。", "ln_f off: the logits come out larger.",
          "seed 003 §2.17.5 (row 3)", "no figure (§2.15.3: about 4× on 12 layers)", judge_ln_f),
    Claim("scaled_init_shallow", "关掉缩放初始化：深层变慢，浅层无感。",
          "Scaled init off: deep stacks slow down, shallow ones do not notice.", "seed 003 §2.17.5 (row 4)",
          "no figure; judged at the mode's depth as 'no difference beyond ±0.05'", judge_scaled_init),
    Claim("untied_more_parameters_slightly_worse", "关掉权重共享：参数增 36%，效果略降。",
          "Weight tying off: 36% more parameters, a slightly worse result.", "seed 003 §2.17.5 (row 5)",
          "+36% (153,600 / 425,984: the 2-layer model's figure; 8.8% at 12 layers)", judge_tying),
    Claim("no_positions_blind_to_order", "关掉位置编码：完全学不会顺序。", "Positions off: it cannot learn order at all.",
          "seed 003 §2.17.5 (row 6)", "no figure; judged as 'shuffling the prefix moves its prediction under a tenth as much'",
          judge_positions),
    Claim("block_norm_slower", "块与块之间再加一层归一化：训练变慢、梯度尺度下降。",
          "A LayerNorm between blocks: training slows and the gradient scale drops.", "seed 003 §2.15.6",
          "no figure", judge_block_norm),
    Claim("w_o_is_used", "把 W_O 的输出乘以 0，loss 应当变化（说明它被用上了）。",
          "Zeroing W_O's output changes the loss (it is used).", "seed 003 §2.15.5", "no figure", judge_w_o),
    Claim("eight_heads", "头数从 4 改成 8：参数量不变，loss 会怎样？",
          "4 → 8 heads: the same parameters; what happens to the loss?", "seed 003 §2.25.1 (exercise 1)",
          "a question: no answer given", judge_heads),
)


def plot(views, folder):
    return [plot_curves(views, folder, "curves", list(CASES), title="one switch off at a time")]


LAB = Lab("ablation_table", "消融表：一次关一个", "the ablation table: one switch off at a time (§2.17.5, §2.15.5-6, §2.25.1)",
          "把残差、LayerNorm、ln_f、缩放初始化、位置编码逐个关掉，哪一个伤害最大？哪一个几乎看不出来？先写下你的预测。",
          SETTINGS, runs, execute, CLAIMS, plot, order=12)

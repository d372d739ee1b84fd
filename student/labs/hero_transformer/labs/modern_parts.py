"""Seed 003 §2.21.3: two places where the chapter's model is not a modern one, measured.

The seed says the chapter's standard FFN and its multi-head attention (MHA) stand in for SwiGLU
and grouped-query attention (GQA) without changing its conclusions: at this size SwiGLU's
difference "is within the noise", and GQA's saving is the key/value cache of inference, which
the chapter never uses.  Here the course model is trained next to a SwiGLU copy whose hidden
width keeps the parameter count (variants.swiglu_width) and a GQA copy with 2 key/value heads for
its 4 query heads; each trained model's cache is measured on a held-out batch.
"""

import torch

from . import variants
from .evidence import equal, report, trained, within
from .runner import Claim, Lab, fmt, plot_finals, sample_batch, settings, train_run, training_run

# "within the noise" is a claim about small differences: five seeds where they are cheap
SETTINGS = settings({"tiny": {"kv_heads": 1}, "quick": {"kv_heads": 2, "seeds": [0, 1, 2, 3, 4]},
                     "full": {"kv_heads": 2}})


def runs(setting):
    swiglu_width = variants.swiglu_width(setting["d_model"], setting["d_ff"])
    return [training_run("course", setting), training_run("swiglu", setting, {"ffn": "swiglu"}, d_ff=swiglu_width),
            training_run("gqa", setting, {"kv_heads": setting["kv_heads"]})]


def execute(run, setting, context):
    result, model = train_run(run, setting, context, keep_model=True)
    idx, _ = sample_batch(context.data, setting["block_size"], 1, setting["seed"], context.device)
    model.eval()
    with torch.no_grad():
        cache = model(idx, use_cache=True).past_key_values
    # what inference keeps per generated token: every layer's keys and values
    result["cache_per_token"] = sum(k.numel() + v.numel() for k, v in cache) // idx.shape[1]
    return result


def result(view, key):
    return view["runs"][key]["result"]


def difference(view, key):
    a, b = result(view, key)["final_val"], result(view, "course")["final_val"]
    return None if None in (a, b) else a - b


def judge_swiglu(view):
    course, gated = result(view, "course"), result(view, "swiglu")
    return (f"standard FFN {fmt(course['final_val'])} ({course['parameters']:,} parameters), SwiGLU "
            f"{fmt(gated['final_val'])} ({gated['parameters']:,}, hidden width {view['runs']['swiglu']['params']['d_ff']})",
            [trained("the course model", course["final_val"], view["baselines"]["unigram"]),
             *within("SwiGLU − standard FFN", difference(view, "swiglu"), -0.05, 0.05),
             report("parameters, SwiGLU / standard − 1 (%)", 100 * (gated["parameters"] / course["parameters"] - 1))])


def judge_gqa(view):
    course, grouped = result(view, "course"), result(view, "gqa")
    heads, kv_heads = view["setting"]["n_heads"], view["setting"]["kv_heads"]
    return (f"MHA {fmt(course['final_val'])}, GQA ({kv_heads} of {heads} heads for keys and values) {fmt(grouped['final_val'])}; cache per token "
            f"{course['cache_per_token']:,} against {grouped['cache_per_token']:,} numbers",
            [trained("the course model", course["final_val"], view["baselines"]["unigram"]),
             equal("KV cache per token, MHA / GQA − heads / key-value heads",
                   course["cache_per_token"] / grouped["cache_per_token"] - heads / kv_heads, 0.0),
             *within("GQA − MHA", difference(view, "gqa"), -0.05, 0.05)])


CLAIMS = (
    Claim("swiglu_within_noise", "参数量小的时候，SwiGLU 和标准 FFN 的差别在噪声内。",
          "At this small size SwiGLU and the standard FFN differ within the noise.", "seed 003 §2.21.3 (③)",
          "'within the noise' (no figure); judged as the paired difference within ±0.05 at the same parameter count",
          judge_swiglu),
    Claim("gqa_saves_cache_not_loss", "用 MHA 而不是 GQA 不影响本章结论：GQA 省下的是推理时的 KV cache，本章用不到。",
          "MHA instead of GQA changes none of the chapter's conclusions: GQA saves the inference KV cache, which the "
          "chapter never uses.", "seed 003 §2.21.3 (②)",
          "no figure; judged as the cache shrinking by heads / key-value heads and the loss within ±0.05", judge_gqa),
)


def plot(views, folder):
    keys = ("course", "swiglu", "gqa")
    return [plot_finals(views, folder, "finals", list(range(len(keys))),
                        {"final held-out loss": lambda view: [result(view, key)["final_val"] for key in keys]},
                        "0: standard FFN + MHA, 1: SwiGLU, 2: GQA", title="the chapter's parts against modern ones")]


LAB = Lab("modern_parts", "SwiGLU 与 GQA：本章模型和真实模型的差别", "SwiGLU and GQA: where the chapter's model is not a modern one (§2.21.3)",
          "同样的参数量下，把 FFN 换成 SwiGLU、把注意力换成 2 组 key/value 的 GQA，loss 会差多少？和换一个随机种子的差别比呢？先写下你的预测。",
          SETTINGS, runs, execute, CLAIMS, plot, order=16)

"""Checks that hold for any correct chapter-2 implementation, judged on the student's CPU
outputs: one 1 per one-hot row at the id's column; the lookup equals one_hot(ids) @ W; unused
rows of the table's gradient are exactly zero and its columns sum to the upstream's sum; the
initialiser fills in place, returns its argument, and draws N(0, std^2).

`check(exercise_id, outputs, cases, reference, judges)` returns (name, problem) pairs; a problem
is a (zh, en) pair or None.  The judges are this chapter's visible checks' own
(hero_transformer/embeddings_checks.py, the reference's copy): one check, two front ends.
"""

import torch

from autograder.reference import load

OUT_OF_RANGE = ("too_large", "negative", "far_too_large")  # the cases of one_hot and embed that must refuse


def check(exercise_id, out, cases, reference, judges):
    judges = load("embeddings_checks")
    tensor = lambda name: isinstance(out.get(name), torch.Tensor)  # noqa: E731
    found = []
    if exercise_id == "one_hot":
        for name in ("batch", "extremes"):
            if tensor(name):
                case = cases[name]
                found.append((f"one 1 per row, at the id's column ('{name}')",
                              judges.judge_one_hot_rows(case["ids"], case["vocab_size"], out[name])))
        if "float_ids" in out:
            found.append(("float ids raise TypeError", judges.judge_raised(out["float_ids"], "TypeError")))
        if all(name in out for name in OUT_OF_RANGE):
            problem = next((judges.judge_raised(out[name], "ValueError") for name in OUT_OF_RANGE
                            if judges.judge_raised(out[name], "ValueError")), None)
            found.append(("out-of-range ids raise ValueError", problem))
    if exercise_id == "embed":
        if tensor("square"):
            case = cases["square"]
            found.append(("equals one_hot(ids) @ W on a square table",
                          judges.judge_lookup_rows(case["ids"], case["weight"], out["square"])))
        if all(name in out for name in OUT_OF_RANGE):
            problem = next((judges.judge_raised(out[name], "ValueError") for name in OUT_OF_RANGE
                            if judges.judge_raised(out[name], "ValueError")), None)
            found.append(("out-of-range ids raise ValueError", problem))
    if exercise_id == "embedding_grad" and tensor("batch"):
        case = cases["batch"]
        V, d = case["vocab_size"], case["upstream"].shape[-1]
        found.append(("unused rows are exactly zero", judges.judge_unused_rows_zero(case["ids"], out["batch"], V, d)))
        found.append(("columns sum to the upstream's sum", judges.judge_column_sums(case["upstream"], out["batch"], V, d)))
    if exercise_id == "init_normal":
        default = out.get("default_std")
        if isinstance(default, tuple) and len(default) == 2:
            found.append(("fills in place and returns its argument", judges.judge_in_place(*default)))
        # the text asks for normal_'s own numbers ("逐位相同"): another sampler of N(0, std^2) draws others
        for name, case in cases.items():
            got = out.get(name)
            if case["seed"] is None or not (isinstance(got, tuple) and len(got) == 2 and isinstance(got[0], torch.Tensor)):
                continue
            drawn = torch.zeros(case["shape"], dtype=getattr(torch, case.get("dtype", "float32"))).normal_(
                0.0, case.get("std", reference.INIT_STD), generator=torch.Generator().manual_seed(case["seed"]))
            if got[0].shape == drawn.shape and got[0].dtype == drawn.dtype and not torch.equal(got[0].cpu(), drawn):
                found.append(("exactly the numbers normal_ draws from the generator", (
                    f"用例 {name}：你的数与 weight.normal_(0, std, generator=generator) 给出的不是逐位相同；"
                    f"本练习要 normal_（或 torch.nn.init.normal_）自己的数，别的采样方法给的是别的数。",
                    f"case {name}: your numbers are not bit for bit those of weight.normal_(0, std, "
                    f"generator=generator); the exercise asks for normal_'s (or torch.nn.init.normal_'s) own "
                    f"numbers, and another sampler draws others.")))
                break
        large = out.get("large")
        if isinstance(large, tuple) and len(large) == 2 and isinstance(large[0], torch.Tensor):
            found.append(("mean about 0, standard deviation about std",
                          judges.judge_normal_scale(large[0], reference.INIT_STD)))
    return found

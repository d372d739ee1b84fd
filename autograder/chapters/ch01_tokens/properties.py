"""Checks that hold for any correct chapter-1 implementation, judged on the student's CPU outputs:
<unk> at id 0, the cap counting <unk>, the ranking by count then code point; one id per
character within [0, V); decoding without separators; coverage as a fraction; ln V for uniform
frequencies, Gibbs' inequality and math.inf for an unseen id without smoothing for the unigram
cross entropy.

`check(exercise_id, outputs, cases, reference, judges)` returns (name, problem) pairs; a problem is a
(zh, en) pair or None.  The judges are the visible checks' own (hero_transformer/tokens_checks.py):
one check, two front ends.
"""

import math

import torch

from autograder.reference import load


def _float(value):
    return value.item() if isinstance(value, torch.Tensor) and value.numel() == 1 else value


def _infinite(value):
    """The notebook's rule for alpha=0: an evaluated id never seen in training has probability 0,
    -ln 0 is infinite, and so is the mean."""
    if value == math.inf:
        return None
    return ("alpha=0 时评估序列里有训练中没出现过的 id：它的概率是 0，-ln 0 是无穷大，平均值也是无穷大，"
            "应返回 math.inf（不能跳过这个 id，也不能给它一个很小的概率）。",
            "with alpha=0 an evaluated id never seen in training has probability 0; -ln 0 is infinite and so is "
            "the mean, so the result must be math.inf (do not skip that id or give it a tiny probability).")


def check(exercise_id, out, cases, reference, judges):
    judges = load("tokens_checks")  # this chapter's judges, not chapter 5's
    found = []
    if exercise_id == "build_vocab":
        poems = cases["poems"]
        itos = out.get("poems")
        if isinstance(itos, (list, tuple)):
            found.append(("id 0 is <unk>", judges.judge_unk_first(itos)))
            found.append(("the cap counts <unk>", judges.judge_vocab_size(poems["text"], poems["max_size"], itos)))
            if itos and itos[0] == "<unk>":
                found.append(("ranked by count, ties by code point", judges.judge_vocab_ranked(poems["text"], itos)))
    if exercise_id == "encode":
        case, ids = cases["unknown"], out.get("unknown")
        if isinstance(ids, torch.Tensor) and ids.dim() == 1:
            ids = ids.tolist()
            found.append(("one id per character", judges.judge_one_id_per_char(case["text"], ids)))
            found.append(("ids within [0, V)", judges.judge_ids_in_range(ids, len(case["itos"]))))
    if exercise_id == "decode":
        case, text = cases["with_unk"], out.get("with_unk")
        if isinstance(text, str):
            found.append(("tokens joined without separators",
                          judges.judge_decoded(case["itos"], case["ids"].tolist(), text)))
    if exercise_id == "coverage":
        values = [_float(out[name]) for name in cases if name in out]
        if values and all(isinstance(v, float) for v in values):
            bad = next((judges.judge_fraction(v) for v in values if judges.judge_fraction(v)), None)
            found.append(("a fraction between 0 and 1", bad))
    if exercise_id == "unigram_cross_entropy":
        # most telling first: feedback leads with the first failed property (engine.SPECIFICITY), and a
        # sum over the V probabilities other than 1 names the denominator
        uniform, smoothed = _float(out.get("uniform")), _float(out.get("smoothed_in_sample"))
        per_id = out.get("each_id")
        if isinstance(per_id, torch.Tensor) and per_id.dim() == 1 and per_id.numel() == cases["each_id"]["vocab_size"]:
            found.append(("the V probabilities sum to 1", judges.judge_sums_to_one(per_id.tolist())))
        if isinstance(uniform, float):
            found.append(("uniform frequencies give ln V nats",
                          judges.judge_uniform_baseline(uniform, cases["uniform"]["vocab_size"])))
        if isinstance(smoothed, float):
            found.append(("not below the text's own entropy (Gibbs)",
                          judges.judge_gibbs(cases["smoothed_in_sample"]["eval"].tolist(), smoothed)))
        unseen = _float(out.get("unseen_unsmoothed"))
        if isinstance(unseen, float):
            found.append(("alpha=0 and an unseen id give math.inf", _infinite(unseen)))
    return found

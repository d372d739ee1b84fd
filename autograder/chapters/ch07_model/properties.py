"""Checks that hold for any correct chapter-7 implementation, judged on the student's CPU
outputs: logits [B, T, V], a loss equal to the mean cross entropy of those logits (None without
targets), one present per block, the cached decode equal to the full forward, ValueError past
block_size; LayerNorm weights one and biases zero after init_weights, the scale of each drawn
matrix, the same weights from the same generator; parameter names in named_parameters() order and
each gradient question silent on the setups that are not its own; a ledger gap of 0 for a sound
model.

`check(exercise_id, outputs, cases, reference, judges)` returns (name, problem) pairs; a problem is
a (zh, en) pair or None.  The judges are the visible checks' own (hero_transformer/model_checks.py):
one check, two front ends.
"""

import torch

from autograder.reference import load

from . import probes

JUDGES = load("model_checks")

# the setups each gradient question must leave empty (the others' problems, or none at all)
QUIET = {
    "frozen_parameters": ("sound", "unreached", "zero_gradient", "cancelling_gradient", "unoptimized",
                          "equal_values_left_out", "two_groups"),
    "unreached_parameters": ("sound", "frozen", "frozen_still_held", "cancelling_gradient", "unoptimized",
                             "equal_values_left_out", "two_groups"),
    "unoptimized_parameters": ("sound", "frozen", "frozen_still_held", "unreached", "zero_gradient",
                               "cancelling_gradient", "two_groups"),
}
SETUP_WORDS = {
    "sound": ("完好的训练设置", "a sound training setup"),
    "frozen": ("冻结了一个参数的设置", "a setup with a frozen parameter"),
    "frozen_still_held": ("冻结参数仍在优化器里的设置", "a setup whose frozen parameter the optimizer still holds"),
    "unreached": ("有一层前向没有用到的设置", "a setup with a layer the forward never uses"),
    "zero_gradient": ("有一个梯度全零的参数的设置", "a setup with a parameter whose gradient is all zero"),
    "cancelling_gradient": ("有一个梯度各项正负相消（和为 0、但不全为 0）的参数的设置",
                            "a setup with a parameter whose gradient entries cancel (they sum to 0 but are not all 0)"),
    "unoptimized": ("优化器漏了一个参数的设置", "a setup whose optimizer leaves a parameter out"),
    "equal_values_left_out": ("优化器漏了一个与别人数值相同的参数的设置",
                              "a setup whose optimizer leaves out a parameter equal in value to a held one"),
    "two_groups": ("优化器有两个参数组的设置", "a setup whose optimizer has two param groups"),
}


def _outcome(value):
    return value if isinstance(value, tuple) and len(value) == 4 else None


def check(exercise_id, out, cases, reference, judges):
    judges = JUDGES
    found = []
    if exercise_id == "model_forward":
        targets = _outcome(out.get("targets"))
        if targets is not None:
            case = cases["targets"]
            found.append(("logits are [B, T, V]", judges.judge_logits_shape(case["idx"], targets[1], probes.VOCAB)))
            if isinstance(targets[1], torch.Tensor):
                found.append(("the loss is the mean cross entropy of the logits",
                              judges.judge_loss(targets[1], case["targets"], targets[2])))
            found.append(("one present per block", judges.judge_presents(targets[3], True, probes.LAYERS)))
        plain = _outcome(out.get("plain"))
        if plain is not None:
            found.append(("no targets, no loss", judges.judge_loss(plain[1], None, plain[2])))
            found.append(("no cache without use_cache", judges.judge_presents(plain[3], False, probes.LAYERS)))
        cached, full = _outcome(out.get("cache")), _outcome(out.get("full"))
        if cached is not None and full is not None:
            found.append(("the cached decode equals the full forward", judges.judge_incremental(full[1], cached[1])))
        if "too_long" in out:
            found.append(("ValueError past block_size", judges.judge_raised_value_error(out["too_long"])))
    if exercise_id == "init_weights":
        small, again = out.get("small"), out.get("small_again")
        if isinstance(small, tuple) and len(small) == 3:
            found.append(("returns the model it was given", judges.judge_returns_model(small[0])))
            if _named(small[1]):
                found.append(("LayerNorm weights one, biases zero", judges.judge_init_fixed(small[1])))
        wide = out.get("wide")
        if isinstance(wide, tuple) and len(wide) == 3 and _named(wide[1]):
            found.append(("0.02 and 0.02/sqrt(2N) scales", judges.judge_init_std(wide[1], cases["wide"]["layers"])))
        if isinstance(small, tuple) and isinstance(again, tuple) and len(small) == len(again) == 3 \
                and _named(small[1]) and _named(again[1]):
            found.append(("the same generator gives the same weights", judges.judge_same_draws(small[1], again[1])))
    if exercise_id in QUIET:
        names = [name for name, _ in probes.AuditModel().named_parameters()]
        found.append(("parameter names in named_parameters() order",
                      next((problem for problem in (judges.judge_names(value, names, exercise_id, exercise_id)
                                                    for case, value in out.items() if case != "read_only")
                            if problem), None)))
        read_only = out.get("read_only")
        if isinstance(read_only, tuple) and len(read_only) == 1 and isinstance(read_only[0], tuple) \
                and len(read_only[0]) == 2 and isinstance(read_only[0][1], list):
            changed = [str(name)[:60] for name in read_only[0][1]][:6]
            found.append(("leaves the model and its optimizer as they were", None if not changed else (
                f"调用 {exercise_id} 之后，模型变了：{'、'.join(changed)} 的梯度、requires_grad 或优化器的参数组与调用前"
                "不同。这三个问题只读模型和优化器：不调用 zero_grad()，不改 requires_grad，不动参数组。",
                f"after the call of {exercise_id} the model was not as before: the gradient, requires_grad or param "
                f"groups of {', '.join(changed)} changed. The three questions only read the model and the optimizer: "
                "no zero_grad(), no requires_grad change, no param group change.")))
        problems = (judges.judge_flags_nothing(out[setup], *SETUP_WORDS[setup], exercise_id, exercise_id)
                    for setup in QUIET[exercise_id] if isinstance(out.get(setup), list))
        found.append(("silent on the setups that are not its own", next((p for p in problems if p), None)))
    if exercise_id == "ledger_gap" and "sound" in out:
        gap = out["sound"]
        problem = judges.judge_gap(gap, 0, "模型完好", "for a sound model") if not isinstance(gap, int) else None
        if problem is None and gap != 0:  # the number comes from the grader's stand-ins, not the student's model
            problem = ("评分器自己的完好模型（配上替身 parameter_count）上，你的 ledger_gap 返回了 "
                       f"{gap}，而完好的模型应为 0。这个数来自评分器的替身，不是你的模型的参数数；检查 ledger_gap "
                       "是否按名字调用 parameter_count、把 cfg 的字段按顺序传入、并减去 model.parameters() 的元素总数。",
                       f"on the grader's own sound model (with a stand-in parameter_count) your ledger_gap returned {gap}, "
                       "where a sound model gives 0. The number comes from the grader's stand-ins, not from your "
                       "model's parameters; check that ledger_gap calls parameter_count by name, passes cfg's fields in "
                       "order and subtracts the element count of model.parameters().")
        found.append(("0 for a sound model", problem))
    return found


def _named(value):
    return isinstance(value, list) and all(isinstance(item, tuple) and len(item) == 2
                                           and isinstance(item[0], str) and isinstance(item[1], torch.Tensor)
                                           for item in value)

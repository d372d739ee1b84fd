"""Checks that hold for any correct chapter-3 implementation, judged on the student's CPU
outputs: int64 ids counting on from start, a clear ValueError for rows the table lacks, the
shape [B, T, d] kept, one row per position shared by the batch, a cache continuation that
agrees with the whole sequence, and the untrained rows as an ascending list of exactly the rows
no sequence reads.

`check(exercise_id, outputs, cases, reference, judges)` returns (name, problem) pairs.  The
judges are the visible checks' own (hero_transformer/positions_checks.py), loaded from the
reference package: one check, two front ends.
"""

import torch

from autograder.reference import load

from .probes import MUST_RAISE


def _first(problems):
    """The first problem among the cases' (None when every case has the property)."""
    return next((problem for problem in problems if problem is not None), None)


def check(exercise_id, out, cases, reference, judges):
    judges = load("positions_checks")
    found = []
    if exercise_id == "position_ids":
        valid = [name for name in cases if name not in MUST_RAISE[exercise_id] and name in out]
        tensors = [name for name in valid if isinstance(out[name], torch.Tensor)]
        if tensors:
            found.append(("ids are int64", _first(judges.judge_int64(out[n]) for n in tensors)))
            found.append(("ids count on from start", _first(
                judges.judge_counts_from_start(out[n], cases[n]["start"] or 0, cases[n]["args"][0]) for n in tensors)))
    if exercise_id in MUST_RAISE:
        refused = [name for name in MUST_RAISE[exercise_id] if isinstance(out.get(name), str)]
        if refused:
            found.append(("ValueError for rows the table lacks",
                          _first(judges.judge_value_error(out[n]) for n in refused)))
    if exercise_id == "add_positions":
        x, y = cases["default_start"]["x"], out.get("default_start")
        if isinstance(y, torch.Tensor):
            found.append(("shape [B,T,d] kept", judges.judge_same_shape(x, y)))
            found.append(("one row per position, the same for every sequence", judges.judge_shared_rows(x, y)))
        split = out.get("split")
        if isinstance(split, (tuple, list)) and len(split) == 2:
            found.append(("start continues the sequence", judges.judge_continuation(*split)))
    if exercise_id == "untrained_positions":
        small = [name for name in cases if name != "lab" and name in out]
        if small:
            found.append(("an ascending list of ints", _first(judges.judge_ascending_ints(out[n]) for n in small)))
            found.append(("exactly the rows no sequence reads", _first(
                judges.judge_untrained(out[n], cases[n]["lengths"], cases[n]["block_size"]) for n in small)))
    return found

"""What each chapter-3 exercise is asked to compute: cases and probes.

The three exercises of hero_transformer/positions.py stand alone (none calls another
exercise), so no test double is needed: a probe calls the student's function on inputs the
grader chose.  Where a correct implementation must refuse its input (positions the table does
not have), the probe records what the call did as a string: "raised ValueError", "raised
<another type>", or "no error, returned ..." with the values, so silent clamping and
wrapping around are told apart in the feedback.  A stub's NotImplementedError goes through.

Shapes keep T != d and B > 1, so a swapped or wrongly broadcast axis shows.

This file imports only torch, the standard library and the grader's probes module
(autograd_gradients): the worker loads it inside the sandbox next to student code.
"""

import torch

try:  # in the grader, a module of the autograder package
    from autograder.probes import autograd_gradients
except ImportError:  # in the worker, the grader's probes module next to it
    from probes import autograd_gradients

MAX_ITEMS = 64  # a list the wire carries whole (wire.MAX_ITEMS); longer lists travel in chunks


def make_cases(exercise_id):
    """Inputs for one exercise, identical on every run (fixed generator)."""
    gen = torch.Generator().manual_seed(20260303)

    def randn(*shape):
        return torch.randn(*shape, generator=gen)

    if exercise_id == "position_ids":
        # args: (length, block_size), start given separately (None: the default is used)
        return {
            "default_start": {"args": (4, 9), "start": None},
            "full_table": {"args": (6, 6), "start": 0},  # start + T == C: every row, no error
            "after_cache": {"args": (2, 7), "start": 3},
            "to_the_edge": {"args": (3, 8), "start": 5},
            "one_new_token": {"args": (1, 4), "start": 3},  # a generation step at the last row
            "too_long": {"args": (7, 6), "start": 0},
            "cache_overflow": {"args": (2, 6), "start": 5},  # fits alone, not after the cache
            "negative_start": {"args": (2, 6), "start": -1},
            "negative_length": {"args": (-1, 6), "start": 2},  # arange(2, 1) would come back empty
            "no_tokens": {"args": (0, 5), "start": 2},  # nothing new: no ids, and no error
            # nothing new, but start + length > block_size all the same: the text's rule, so ValueError
            "no_tokens_past_the_table": {"args": (0, 5), "start": 7},
        }
    if exercise_id == "add_positions":
        return {
            "default_start": {"x": randn(2, 3, 4), "table": randn(5, 4), "start": None},
            "after_cache": {"x": randn(2, 2, 4), "table": randn(6, 4), "start": 3},
            "full_table": {"x": randn(3, 4, 3), "table": randn(4, 3), "start": 0},
            "to_the_edge": {"x": randn(2, 2, 5), "table": randn(7, 5), "start": 5},
            "one_new_token": {"x": randn(3, 1, 4), "table": randn(4, 4), "start": 2},
            # the first `split` tokens with start=0, then the rest with start=split, against all at once
            "split": {"x": randn(2, 5, 3), "table": randn(6, 3), "start": 2},
            "too_long": {"x": randn(2, 5, 3), "table": randn(4, 3), "start": 0},
            "cache_overflow": {"x": randn(2, 2, 3), "table": randn(5, 3), "start": 4},  # one row would broadcast
            "no_tokens": {"x": randn(2, 0, 3), "table": randn(4, 3), "start": 4},  # a full cache and T = 0 fit
            "no_tokens_past_the_table": {"x": randn(2, 0, 3), "table": randn(4, 3), "start": 6},
            # the table is learned: autograd's gradient of <output, upstream> reaches x and the rows read
            "gradients": {"x": randn(2, 3, 4), "table": randn(6, 4), "start": 2, "upstream": randn(2, 3, 4)},
        }
    if exercise_id == "untrained_positions":
        return {
            "one_length": {"lengths": [3], "block_size": 6},
            "mixed": {"lengths": [2, 5, 3], "block_size": 8},
            "all_trained": {"lengths": [4, 6], "block_size": 6},
            "unsorted_lengths": {"lengths": [7, 1, 4, 7], "block_size": 10},
            # seed 003's lab: trained on length 64, evaluated up to 256
            "lab": {"lengths": [64, 64, 64], "block_size": 256},
            "no_sequences": {"lengths": [], "block_size": 4},  # nothing trained: every row is untrained
        }
    raise KeyError(exercise_id)


# cases where a correct implementation raises ValueError
MUST_RAISE = {"position_ids": ("too_long", "cache_overflow", "negative_start", "negative_length",
                              "no_tokens_past_the_table"),
              "add_positions": ("too_long", "cache_overflow", "no_tokens_past_the_table")}


def _returned(value):
    """A short, exact account of what a call returned where it should have raised."""
    if isinstance(value, torch.Tensor):
        values = value.detach().cpu().flatten()[:24]
        shown = [str(v) for v in values.tolist()] if not values.is_floating_point() else \
            [f"{v:.4f}" for v in values.double().tolist()]
        return (f"no error, returned a {str(value.dtype).replace('torch.', '')} tensor of shape {list(value.shape)}: "
                + ", ".join(shown))
    return f"no error, returned {type(value).__name__}: {repr(value)[:200]}"


def _guarded(call):
    """What a call on input a correct implementation refuses did, as a string."""
    try:
        value = call()
    except NotImplementedError:
        raise
    except ValueError:
        return "raised ValueError"
    except Exception as exc:
        return f"raised {type(exc).__name__}"
    return _returned(value)


def _start(case):
    return {} if case["start"] is None else {"start": case["start"]}


def run_case(module, exercise_id, case_name, case, device):
    """Outputs of one case.  `case` holds CPU tensors; they are moved to `device`."""
    case = {k: (v.to(device) if isinstance(v, torch.Tensor) else v) for k, v in case.items()}
    with torch.no_grad():
        if exercise_id == "position_ids":
            def call():
                return module.position_ids(*case["args"], **_start(case))
        elif exercise_id == "add_positions":
            if case_name == "split":
                x, table, k = case["x"], case["table"], case["start"]
                whole = module.add_positions(x, table)
                pieces = torch.cat([module.add_positions(x[:, :k], table),
                                    module.add_positions(x[:, k:], table, start=k)], dim=1)
                return whole, pieces
            if case_name == "gradients":
                return autograd_gradients(lambda x, table: module.add_positions(x, table, start=case["start"]),
                                          {"x": case["x"], "table": case["table"]}, case["upstream"])

            def call():
                return module.add_positions(case["x"], case["table"], **_start(case))
        elif exercise_id == "untrained_positions":
            rows = module.untrained_positions(case["lengths"], case["block_size"])  # the caller's list: read only
            if isinstance(rows, list) and len(rows) > MAX_ITEMS:
                return [rows[i : i + MAX_ITEMS] for i in range(0, len(rows), MAX_ITEMS)]
            return rows
        else:
            raise KeyError(exercise_id)
        if case_name in MUST_RAISE.get(exercise_id, ()):
            return _guarded(call)
        out = call()
        # position_ids takes no tensor: its ids go where the grader's inputs would be
        return out.to(device) if exercise_id == "position_ids" and isinstance(out, torch.Tensor) else out

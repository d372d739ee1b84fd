"""What each chapter-2 exercise is asked to compute: cases and probes.

A probe takes an embeddings module (the student's, in the sandboxed worker; the reference, in
the grading process) and one case of inputs chosen by the grader, and returns plain outputs.
The grader runs the same probe on the reference and compares.  The four exercises of this
chapter use no other exercise, so no test double is needed; the probes themselves use only
indexing, arithmetic and torch's random generators, never the embedding op or an nn.Module (the
whole probe runs under the watch of the exercise's forbidden calls).

Shapes are chosen so that swapped axes show: T = 3, d = 4, V = 7 (all different), plus a
square table (V = d) where reading a column instead of a row gives the right shape and wrong
values.  A case where a correct implementation must refuse its input returns what the call did
("raised ValueError", or what it returned instead); a stub's NotImplementedError is re-raised so
that it still reads as "not implemented".

This file imports only torch and the standard library: the worker loads it inside the sandbox
next to student code.
"""

import torch

SEED = 20260202
VOCAB, WIDTH = 7, 4  # V = 7, d = 4, and T = 3 below: three different sizes


def make_cases(exercise_id):
    """Inputs for one exercise, identical on every run (fixed generator)."""
    gen = torch.Generator().manual_seed(SEED)

    def randn(*shape, dtype=torch.float32):
        return torch.randn(*shape, generator=gen, dtype=dtype)

    def randint(high, *shape, dtype=torch.int64):
        return torch.randint(0, high, shape, generator=gen).to(dtype)

    if exercise_id == "one_hot":
        return {
            "batch": {"ids": randint(5, 2, 3), "vocab_size": 5},
            # id 0 and id V-1 both present: an off-by-one column shows at both ends
            "extremes": {"ids": torch.tensor([[0, 4, 4], [2, 0, 1]]), "vocab_size": 5},
            "vector": {"ids": randint(VOCAB, 6), "vocab_size": VOCAB},
            "int32_ids": {"ids": randint(6, 3, 2, dtype=torch.int32), "vocab_size": 6},
            "float64_rows": {"ids": torch.tensor([[3, 1, 0, 2]]), "vocab_size": 4, "dtype": "float64"},
            "float_ids": {"ids": torch.tensor([1.0, 2.0, 0.0]), "vocab_size": 3, "must_raise": True},
            # any floating dtype, not float32 alone: no float id is an integer id
            "float64_ids": {"ids": torch.tensor([[0.0, 2.0]], dtype=torch.float64), "vocab_size": 3, "must_raise": True},
            "too_large": {"ids": torch.tensor([[0, 5, 2]]), "vocab_size": 5, "must_raise": True},
            "negative": {"ids": torch.tensor([[1, -1, 2]]), "vocab_size": 5, "must_raise": True},
            # past V, not just at it: a bound written as `== vocab_size` lets it through
            "far_too_large": {"ids": torch.tensor([[2, 8, 0]]), "vocab_size": 5, "must_raise": True},
            # an integer dtype that scatter_ refuses as an index (it takes int64 and int32 only)
            "uint8_ids": {"ids": randint(6, 2, 3, dtype=torch.uint8), "vocab_size": 6},
            # V past uint8's range: ids compared with V in their own dtype see V wrap (300 -> 44) and refuse 50
            "uint8_wide_vocab": {"ids": torch.tensor([50, 0, 255], dtype=torch.uint8), "vocab_size": 300},
            "scalar": {"ids": torch.tensor(3), "vocab_size": 5},  # [...] may be no axis at all: [V]
            "empty": {"ids": torch.zeros(2, 0, dtype=torch.int64), "vocab_size": 5},
        }
    if exercise_id == "embed":
        table = randn(VOCAB, WIDTH)
        return {
            "batch": {"ids": torch.tensor([[1, 6, 1], [0, 3, 6]]), "weight": table},
            # V = d: weight.T[ids] has the right shape here, so only the values tell
            "square": {"ids": torch.tensor([[4, 0, 2], [1, 4, 3]]), "weight": randn(5, 5)},
            # one sequence, still [B, T] (the text asks for [B, T] ids only)
            "one_row": {"ids": randint(VOCAB, 1, 6), "weight": table},
            "float64": {"ids": randint(VOCAB, 2, 3), "weight": randn(VOCAB, WIDTH, dtype=torch.float64)},
            "gradient": {"ids": torch.tensor([[2, 5, 2], [2, 0, 4]]), "weight": table,
                         "upstream": randn(2, 3, WIDTH)},
            "too_large": {"ids": torch.tensor([[0, VOCAB, 2]]), "weight": table, "must_raise": True},
            "negative": {"ids": torch.tensor([[3, -1, 2]]), "weight": table, "must_raise": True},
            "far_too_large": {"ids": torch.tensor([[1, VOCAB + 3, 0]]), "weight": table, "must_raise": True},
            "empty": {"ids": torch.zeros(2, 0, dtype=torch.int64), "weight": table},
        }
    if exercise_id == "embedding_grad":
        return {
            # id 1 three times, id 5 twice, id 6 once; rows 0, 2, 3, 4 unused
            "batch": {"ids": torch.tensor([[1, 5, 1], [6, 5, 1]]), "upstream": randn(2, 3, WIDTH),
                      "vocab_size": VOCAB},
            # V = d: a transposed [d, V] result has the right shape here
            "square": {"ids": torch.tensor([[0, 2, 2], [3, 0, 0]]), "upstream": randn(2, 3, 4), "vocab_size": 4},
            "vector": {"ids": torch.tensor([4, 0, 4, 4, 2]), "upstream": randn(5, 3), "vocab_size": 6},
            "same_id": {"ids": torch.full((2, 3), 3), "upstream": randn(2, 3, WIDTH), "vocab_size": VOCAB},
            "float64": {"ids": randint(VOCAB, 3, 4), "upstream": randn(3, 4, 2, dtype=torch.float64),
                        "vocab_size": VOCAB},
            # [...] may be no axis at all (one id, one upstream row) or hold no position (all rows zero)
            "scalar": {"ids": torch.tensor(2), "upstream": randn(WIDTH), "vocab_size": VOCAB},
            "empty": {"ids": torch.zeros(0, dtype=torch.int64), "upstream": randn(0, WIDTH), "vocab_size": VOCAB},
        }
    if exercise_id == "init_normal":
        # `seed` seeds the generator handed to init_normal_; `global_seed` seeds torch's global RNG
        # just before the call, to something else, so numbers drawn from the global RNG differ
        return {
            "default_std": {"shape": [6, 4], "seed": 11, "global_seed": 99},
            "given_std": {"shape": [3, 5], "std": 0.5, "seed": 12, "global_seed": 98},
            "float64": {"shape": [4, 3], "std": 0.1, "seed": 13, "global_seed": 97, "dtype": "float64"},
            "parameter": {"shape": [5, 2], "std": 0.02, "seed": 14, "global_seed": 96, "requires_grad": True},
            "vector": {"shape": [10], "std": 1.5, "seed": 15, "global_seed": 95},
            # no generator: then the global RNG (seeded here) is the source
            "no_generator": {"shape": [3, 4], "std": 0.3, "seed": None, "global_seed": 94},
            # large enough for the sample statistics of properties.py
            "large": {"shape": [256, 64], "seed": 16, "global_seed": 93},
            # float64 with 16 or more numbers: normal_ draws float64 in its vectorised path here
            "float64_large": {"shape": [16, 8], "std": 0.2, "seed": 17, "global_seed": 92, "dtype": "float64"},
        }
    raise KeyError(exercise_id)


# --- probes ----------------------------------------------------------------------


def _what_it_did(call):
    """For a case that must be refused: 'raised <ExceptionType>', or what came back instead."""
    try:
        out = call()
    except NotImplementedError:
        raise  # a stub stays "not implemented"
    except Exception as exc:  # noqa: BLE001  (which exception it is, is the point)
        return f"raised {type(exc).__name__}"
    if isinstance(out, torch.Tensor):
        return f"returned a tensor of shape {list(out.shape)} without raising"
    return f"returned {type(out).__name__} without raising"


def run_case(module, exercise_id, case_name, case, device):
    """Outputs of one case.  `case` holds CPU tensors; they are moved to `device`."""
    case = {k: (v.to(device) if isinstance(v, torch.Tensor) else v) for k, v in case.items()}
    if exercise_id == "one_hot":
        kwargs = {"dtype": getattr(torch, case["dtype"])} if "dtype" in case else {}
        call = lambda: module.one_hot(case["ids"], case["vocab_size"], **kwargs)  # noqa: E731
        return _what_it_did(call) if case.get("must_raise") else call()
    if exercise_id == "embed":
        if case.get("must_raise"):
            return _what_it_did(lambda: module.embed(case["ids"], case["weight"]))
        if case_name == "gradient":
            # the lookup is part of the graph: the rows it read get the upstream gradient
            weight = case["weight"].clone().requires_grad_(True)
            out = module.embed(case["ids"], weight)
            (out * case["upstream"]).sum().backward()
            return out.detach(), weight.grad
        with torch.no_grad():
            return module.embed(case["ids"], case["weight"])
    if exercise_id == "embedding_grad":
        # no torch.no_grad() here: a body may run autograd (through indexing) to get its answer
        return module.embedding_grad(case["ids"], case["upstream"], case["vocab_size"])
    if exercise_id == "init_normal":
        return _run_init(module, case, device)
    raise KeyError(exercise_id)


def _run_init(module, case, device):
    """(the argument's values after the call, whether the call returned the argument itself).

    The numbers are those of torch's CPU generator: CUDA draws a different stream from the same
    seed, and the reference's numbers are CPU ones.  So the tensor is filled on the CPU on every
    device (as when a model is initialised on the CPU and moved), and handed back on `device`."""
    dtype = getattr(torch, case.get("dtype", "float32"))
    with torch.random.fork_rng(devices=[]):  # the caller's global RNG state is left as it was
        torch.manual_seed(case["global_seed"])
        weight = torch.zeros(case["shape"], dtype=dtype)
        if case.get("requires_grad"):
            weight.requires_grad_(True)  # like an nn.Parameter: filling it in place needs no_grad
        kwargs = {} if "std" not in case else {"std": case["std"]}
        if case["seed"] is not None:
            kwargs["generator"] = torch.Generator().manual_seed(case["seed"])
        out = module.init_normal_(weight, **kwargs)
    return weight.detach().clone().to(device), out is weight

"""The chapter-agnostic half of the probes, shared by both sides of the grader.

A chapter's probes (autograder/chapters/<id>/probes.py) say what each exercise
is asked to compute: `make_cases(exercise_id)` and `run_case(module,
exercise_id, case_name, case, device)`.  This file runs them and carries the
results: `run_all` catches what the code under test raises, `watching` sees
forbidden calls, `describe` turns an exception into a student-readable account.

This file imports only torch and the standard library: the worker loads it
inside the sandbox next to student code.
"""

import contextlib
import traceback

import torch
from torch import nn

try:  # in the grader, a module of the autograder package
    from .wire import Unusable, decode, encode  # noqa: F401  (both sides use them through here)
except ImportError:  # in the worker, a file next to this one
    from wire import Unusable, decode, encode  # noqa: F401


@contextlib.contextmanager
def watching(forbids):
    """Record which forbidden calls the code under test makes: `forbids` holds dicts with the
    fields of registry.Forbidden.  Aten operators are seen through a TorchDispatchMode, so every
    route to them counts; module construction through nn.Module.__init__.  The record is what
    the student's own process saw: it catches a shortcut taken in good faith, not one hidden by
    code that switches the watch off (docs/grading.md says so)."""
    from torch.utils._python_dispatch import TorchDispatchMode

    seen = set()
    by_op = {op: entry["call"] for entry in forbids for op in entry.get("ops", ())}
    builders = [entry["call"] for entry in forbids if entry.get("builds_modules")]
    differentiators = [entry["call"] for entry in forbids if entry.get("autograd")]

    class Watch(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            call = by_op.get(func._overloadpacket.__name__)
            if call:
                seen.add(call)
            if differentiators and _differentiating():
                seen.update(differentiators)
            return func(*args, **(kwargs or {}))

    original_init = nn.Module.__init__

    def watched_init(self, *args, **kwargs):
        seen.add(builders[0])
        original_init(self, *args, **kwargs)

    if builders:
        nn.Module.__init__ = watched_init
    try:
        if by_op or differentiators:
            with Watch():
                yield seen
        else:
            yield seen
    finally:
        nn.Module.__init__ = original_init


def _differentiating():
    """Whether the operator being dispatched is run by automatic differentiation: the autograd
    engine executing a backward graph (it has a graph task then), or a forward-mode level open."""
    return torch._C._current_graph_task_id() != -1 or torch.autograd.forward_ad._current_level >= 0


def warm_up():
    """A dispatch mode's first use imports a good deal of torch (about 1.8 s here): the worker
    pays that once, before it forks any task, instead of once per watched task."""
    with watching([{"call": "warm-up", "ops": ("add",)}]):
        torch.ones(1) + 1


def run_all(run_case, module, exercise_id, cases, device):
    """Every case's outputs through the chapter's `run_case`, or what the code under test raised on it."""
    outputs = {}
    for name, case in cases.items():
        try:
            outputs[name] = {"ok": encode(run_case(module, exercise_id, name, case, device))}
        except Exception as exc:  # the code under test failed on this case
            outputs[name] = {"raised": describe(exc)}
    return outputs


def describe(exc):
    """A short, student-readable account of an exception raised by their code."""
    if isinstance(exc, NotImplementedError):
        return {"kind": "not_implemented", "message": str(exc)}
    # the student's frames only: the grader's own (probes, importlib, IPython) tell them nothing
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if f.filename.startswith("/submission/") or f.filename.startswith("<ipython-input")]
    text = "".join(traceback.format_list(frames)) + "".join(traceback.format_exception_only(type(exc), exc))
    return {"kind": "exception", "type": type(exc).__name__, "message": str(exc)[:1000], "traceback": text[-3000:]}

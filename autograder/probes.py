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
import os
import sys
import traceback

import torch
from torch import nn

try:  # in the grader, a module of the autograder package
    from .wire import Unusable, decode, encode  # noqa: F401  (both sides use them through here)
except ImportError:  # in the worker, a file next to this one
    from wire import Unusable, decode, encode  # noqa: F401


TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep
_DOTTED = {}  # code object -> "torch.<module>.<qualname>" for code in torch's own files, "" for any other


def _dotted(code):
    """The dotted name of a function of torch's own files, from the file the code was compiled from (so
    a module loaded by path, or one that renames itself, still shows where it lives); "" otherwise."""
    name = _DOTTED.get(code)
    if name is None:
        path, name = code.co_filename, ""
        if path.startswith(TORCH_DIR) and path.endswith(".py"):
            module = "torch." + path[len(TORCH_DIR):-3].replace(os.sep, ".")
            name = f"{module.removesuffix('.__init__')}.{code.co_qualname}"
        _DOTTED[code] = name
    return name


# torch's own "run this eagerly" wrapper: with dynamo imported, it wraps every dispatch mode's
# __torch_dispatch__ (torch._disable_dynamo) and torch.func's transforms, so it is no route of its own
TRANSPARENT = frozenset({"torch._dynamo.eval_frame.DisableContext.__call__.<locals>._fn"})
MISSING = object()
SUBCLASS_DISPATCH = "torch.Tensor.__torch_dispatch__"  # as registry.SUBCLASS_DISPATCH (this file imports no registry)
ROUTES_PER_CALL = 2  # route names kept per forbidden call (the reply holds at most 10 strings)


@contextlib.contextmanager
def watching(forbids):
    """Record which forbidden calls the code under test makes: `forbids` holds dicts with the
    fields of registry.Forbidden.  Aten operators are seen through a TorchDispatchMode, so every
    route to them counts; module construction through nn.Module.__init__; torch functions whose
    operator the dispatcher decomposes before the mode sees it (`functions`: rms_norm, a composite)
    through a TorchFunctionMode.  `internals` are torch's own Python packages or functions (the
    reference implementations torch._refs / torch._decomp / torch._prims, the compilers): any
    operator dispatched while a frame of one of them is on the stack between the code under test
    and this `with`, any operator of the `prims` namespace, and any call of a TorchScript function
    or method counts as that entry's call, and `<call>\t<dotted name of the function>` names the
    route.  A compiled function (torch.compile) runs eagerly under the watch (dynamo's stance
    "force_eager"), inside dynamo's own frames.  The record is what the student's own process saw:
    it catches a shortcut taken in good faith, not one hidden by code that switches the watch off
    (docs/grading.md says so)."""
    from torch.overrides import TorchFunctionMode
    from torch.utils._python_dispatch import TorchDispatchMode

    seen = set()
    by_op = {op: entry["call"] for entry in forbids for op in entry.get("ops", ())}
    by_function = {name: entry["call"] for entry in forbids for name in entry.get("functions", ())}
    builders = [entry["call"] for entry in forbids if entry.get("builds_modules")]
    differentiators = [entry["call"] for entry in forbids if entry.get("autograd")]
    internals = [(prefix, entry["call"]) for entry in forbids for prefix in entry.get("internals", ())]
    # the frame of the `with` statement: the walk up the stack stops there (the grader's own frames
    # above it are never the code under test); a thread's stack, which never meets it, is walked whole
    boundary = sys._getframe(2) if internals else None
    hits = {}  # code object -> the (call, route) its frames make, or None: each code is matched once
    routes = {}

    def matched(route):
        for prefix, call in internals:
            if route == prefix or route.startswith(prefix + "."):
                return call, route
        return None

    def hit(code):
        dotted = _dotted(code)
        found = hits[code] = matched(dotted) if dotted and dotted not in TRANSPARENT else None
        return found

    def record(found):
        """`found`: the (call, route) of the internal frames on the stack, innermost first; the route
        named is the outermost module-level function (the one the code under test called), not a wrapper."""
        plain = [f for f in found if "<locals>" not in f[1]]
        call, route = (plain or found)[-1]
        seen.add(call)
        kept = routes.setdefault(call, set())
        if len(kept) < ROUTES_PER_CALL and route not in kept:
            kept.add(route)
            seen.add(f"{call}\t{route}")

    def internal_frames():
        """The (call, route) of every internal frame between the frame that dispatched the operator and
        the boundary, innermost first: one dict look-up per frame (each code object is matched once)."""
        found, frame = [], sys._getframe(2)  # the frame that dispatched the operator
        while frame is not None and frame is not boundary:
            found_here = hits.get(frame.f_code, MISSING)
            if found_here is MISSING:
                found_here = hit(frame.f_code)
            if found_here is not None:
                found.append(found_here)
            frame = frame.f_back
        return found

    class Watch(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            name = func._overloadpacket.__name__
            call = by_op.get(name)
            if call:
                seen.add(call)
            if differentiators and _differentiating():
                # run by automatic differentiation, which this exercise forbids: the frames above are
                # autograd's own machinery (forward mode runs torch._refs decompositions), not a route
                seen.update(differentiators)
            elif internals:
                found = internal_frames()
                if _own_dispatch(types):  # a subclass's __torch_dispatch__ will run it, with this mode set aside
                    found = [f for f in [matched(SUBCLASS_DISPATCH)] if f is not None] + found
                if func.namespace == "prims":  # torch._prims' operators, however they are reached
                    found = [f for f in [matched(f"torch._prims.{name}")] + found if f is not None]
                if found:
                    record(found)
            return func(*args, **(kwargs or {}))

    class FunctionWatch(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            call = by_function.get(getattr(func, "__name__", "").partition(".")[0])
            if call:
                seen.add(call)
            return func(*args, **(kwargs or {}))

    original_init = nn.Module.__init__

    def watched_init(self, *args, **kwargs):
        seen.add(builders[0])
        original_init(self, *args, **kwargs)

    scripted = {}  # TorchScript runs its operators from C++, with no Python frame of torch.jit above them
    jit_route = matched("torch.jit.ScriptFunction") if internals else None
    if jit_route is not None:
        for kind in (torch._C.ScriptFunction, torch._C.ScriptMethod):
            scripted[kind] = kind.__call__

            def watched_call(self, *args, _original=kind.__call__, _route=f"torch.jit.{kind.__name__}", **kwargs):
                record([matched(_route)])
                return _original(self, *args, **kwargs)
            kind.__call__ = watched_call

    if builders:
        nn.Module.__init__ = watched_init
    try:
        with contextlib.ExitStack() as stack:
            if internals and "torch._dynamo" in sys.modules and matched("torch._dynamo.eval_frame"):
                stack.enter_context(sys.modules["torch._dynamo"].set_stance("force_eager"))
            if by_op or differentiators or internals:
                stack.enter_context(Watch())
            if by_function:
                stack.enter_context(FunctionWatch())
            yield seen
    finally:
        nn.Module.__init__ = original_init
        for kind, original in scripted.items():
            kind.__call__ = original


def _own_dispatch(types):
    """Whether a tensor type of the operator handles it in a __torch_dispatch__ of its own (not
    torch.Tensor's or nn.Parameter's disabled one): that Python code runs outside the watch."""
    return any(cls is not torch.Tensor and vars(cls).get("__torch_dispatch__", _NO_DISPATCH) is not _NO_DISPATCH
               for kind in types for cls in kind.__mro__)


_NO_DISPATCH = torch._C._disabled_torch_dispatch_impl


def _differentiating():
    """Whether the operator being dispatched is run by automatic differentiation: the autograd
    engine executing a backward graph (it has a graph task then), or a forward-mode level open."""
    return torch._C._current_graph_task_id() != -1 or torch.autograd.forward_ad._current_level >= 0


def warm_up():
    """A dispatch mode's first use imports a good deal of torch (about 1.8 s here): the worker
    pays that once, before it forks any task, instead of once per watched task."""
    with watching([{"call": "warm-up", "ops": ("add",), "functions": ("add",), "internals": ("torch._refs",)}]):
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

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
import inspect
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
LIBRARY_ROUTE = "torch.library"  # as registry.LIBRARY_ROUTE: an operator or kernel registered from Python
MODE_ROUTE = "torch.utils._python_dispatch.TorchDispatchMode"  # as registry.MODE_ROUTE: a dispatch mode of one's own
ASIDE_ROUTE = "torch._C"  # as registry.ASIDE_ROUTE: a torch function called while the operator watch is set aside
ROUTES_PER_CALL = 2  # route names kept per forbidden call (the reply holds at most 10 strings)


def _registration(name):
    """A fingerprint of everything the dispatcher holds for one operator: its schema and every kernel,
    with the file each was registered from."""
    return hash(torch._C._dispatch_dump(name))


# The dispatcher as torch itself left it, taken when this file is imported: in the worker, before any
# student file is (an operator defined, or a kernel of torch's replaced, by the code under test at its
# import or later differs from this).  64 ms once per process.
TORCH_OPERATORS = {name: _registration(name) for name in torch._C._dispatch_get_all_op_names()}
# operators whose Python key (the key the watch dispatches from) torch itself handles specially: a
# kernel or fallthrough registered there by anyone else hides the operator from the watch altogether
TORCH_PYTHON_KEY = frozenset(torch._C._dispatch_get_registrations_for_dispatch_key("Python"))
# the methods of a torch.library registration (torch.library.Library and custom_op end in them)
_REGISTERING = ("def_", "def_legacy", "def_name_t_t", "def_schema_t_t", "define", "fallback", "fallback_fallthrough",
                "impl", "impl_t_t", "impl_with_aoti_compile", "register_ad_inplace_or_view_fallback", "reset")


def _torch_s_own(func):
    """Whether the operator is torch's as torch registered it: not one defined by the code under test
    (torch.library.Library, custom_op, register_kernel...) nor one of torch's whose kernels it replaced
    (an IMPL library on aten): such a kernel runs with the watch set aside, where nothing it does is seen."""
    try:
        name = func.name()
    except Exception:  # not an operator of the dispatcher's table (a higher-order operator)
        return True
    return TORCH_OPERATORS.get(name) == _registration(name)


def _own_modes():
    """Whether a TorchDispatchMode other than torch's own is on the stack: it runs an operator the
    watch passes on (one pushed below the watch, before it started) with the watch set aside."""
    for index in range(torch._C._len_torch_dispatch_stack()):
        handler = inspect.unwrap(type(torch._C._get_dispatch_stack_at(index)).__torch_dispatch__)
        code = getattr(handler, "__code__", None)
        if code is not _WATCH_CODE and not (code is not None and _dotted(code)):
            return True
    return False


_PYTHON = torch._C.DispatchKey.Python  # the dispatch key from which dispatch modes are run
_COMPOSITES = {}  # operator -> whether it has a CompositeImplicitAutograd kernel


def _composite(func):
    composite = _COMPOSITES.get(func)
    if composite is None:
        try:
            composite = torch._C._dispatch_has_kernel_for_dispatch_key(func.name(), "CompositeImplicitAutograd")
        except Exception:  # not an operator of the dispatcher's table (a higher-order operator)
            composite = False
        _COMPOSITES[func] = composite
    return composite


# torch's public functions written in Python and the wrappers between them and a function mode
_ENTRY_POINTS = ("torch.overrides.", "torch._compile.", "torch._tensor.", "torch.functional.", "torch.nn.functional.",
                 "torch.nn.modules.")


def _called_by_code_under_test(func):
    """Whether the torch function the function watch is handling was called by code outside torch (the
    code under test), not by torch's own code (which sets the dispatch modes aside to print a tensor, say)."""
    frame = sys._getframe(2)
    while frame is not None and _dotted(frame.f_code).startswith(_ENTRY_POINTS):
        frame = frame.f_back
    return frame is not None and not _dotted(frame.f_code)


_WATCH_CODE = None  # the code of the watch's own handler (a watch inside a watch is no route)


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
    "force_eager"), inside dynamo's own frames.  Code that torch runs with the operator watch set
    aside counts as the `internals` entry too: a tensor subclass's own __torch_dispatch__, an operator
    defined or a kernel of torch's replaced from Python (torch.library, custom_op: any operator whose
    dispatcher entry differs from TORCH_OPERATORS, or a kernel on the Python key), a TorchDispatchMode
    of the code's own (pushed before or during the watch), and a torch function or torch.ops call the
    code under test makes while a torch._C guard or a popped mode stack sets the watch aside, or an
    OpOverload.redispatch.  The record is what the student's own process saw: code that captures
    torch's internals before the watch and turns off both modes is not seen (docs/grading.md says so)."""
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
    torch_s_own = {}  # operator -> _torch_s_own(operator), this watch's verdicts (a registration clears them)
    hits = {}  # code object -> the (call, route) its frames make, or None: each code is matched once
    routes = {}

    def matched(route):
        for prefix, call in internals:
            if route == prefix or route.startswith(prefix + "."):
                return call, route
        return None

    library = matched(LIBRARY_ROUTE)  # (call, route) of an operator or kernel of one's own, or None
    mode_route = matched(MODE_ROUTE)  # (call, route) of a dispatch mode of one's own, or None
    aside = matched(ASIDE_ROUTE)  # (call, route) of a torch function called with the watch set aside, or None
    handling = [0]  # how deep the watch's own handler is running an operator (it is popped meanwhile)

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
                if library is not None:
                    own = torch_s_own.get(func)
                    if own is None:
                        own = torch_s_own[func] = _torch_s_own(func)
                    if not own:  # its kernel, registered from Python, runs next with this mode set aside
                        found = [library] + found
                if mode_route is not None and torch._C._len_torch_dispatch_stack() and _own_modes():
                    found = [mode_route] + found  # a mode below this one runs the operator next
                if found:
                    record(found)
            if _composite(func):
                # a composite reaches this mode only when the keys above it were set aside
                # (torch._C._AutoDispatchBelowAutograd, inference mode): decomposed here, under this
                # mode, what it runs is seen as when it decomposes above the mode
                with self:
                    result = func.decompose(*args, **(kwargs or {}))
                if result is not NotImplemented:
                    return result
            handling[0] += 1
            try:
                return func(*args, **(kwargs or {}))
            finally:
                handling[0] -= 1

    watch = Watch()

    def in_effect():
        """Whether the operator watch would see an operator dispatched now: it is the innermost mode and
        the Python key, where modes are dispatched from, is not excluded (torch._C's dispatch guards)."""
        depth = torch._C._len_torch_dispatch_stack()
        return (depth and torch._C._get_dispatch_stack_at(depth - 1) is watch
                and torch._C._dispatch_tls_is_dispatch_key_included(_PYTHON)
                and not torch._C._dispatch_tls_is_dispatch_key_excluded(_PYTHON))

    def set_aside():
        """The code under test calls torch where the watch is set aside: named as a guard, unless a dispatch
        mode of its own was seen first (whose handler runs with the watch set aside: that is the route)."""
        if mode_route is None or f"{mode_route[0]}\t{mode_route[1]}" not in seen:
            record([aside])

    global _WATCH_CODE
    _WATCH_CODE = inspect.unwrap(Watch.__torch_dispatch__).__code__  # torch wraps every mode's handler

    def registering(original):
        """A torch.library registration while the watch runs: the verdicts kept so far may be stale,
        and a kernel put on the Python key hides its operator from the watch altogether."""
        def register(*args, **kwargs):
            torch_s_own.clear()
            try:
                return original(*args, **kwargs)
            finally:
                check_python_key()
        return register

    def check_python_key():
        if library is not None and set(torch._C._dispatch_get_registrations_for_dispatch_key("Python")) - TORCH_PYTHON_KEY:
            record([library])

    def checked_call(original):
        """An operator called through torch.ops while the watch runs (the watch's own handler calls it too)."""
        def call(self, /, *args, **kwargs):
            if not handling[0] and not in_effect() and _called_by_code_under_test(self):
                set_aside()
            return original(self, *args, **kwargs)
        return call

    def redispatching(original):
        """OpOverload.redispatch from the code under test: it starts below a dispatch key of its choosing,
        below the watch's if it likes."""
        def redispatch(self, /, *args, **kwargs):
            if _called_by_code_under_test(self):
                set_aside()
            return original(self, *args, **kwargs)
        return redispatch

    def pushing(original):
        """A TorchDispatchMode pushed while the watch runs: its handler runs operators with the watch
        set aside, or answers them without running them at all."""
        def push(mode, *args, **kwargs):
            handler = inspect.unwrap(type(mode).__torch_dispatch__)
            code = getattr(handler, "__code__", None)
            if code is not _WATCH_CODE and not (code is not None and _dotted(code)):
                record([mode_route])
            return original(mode, *args, **kwargs)
        return push

    class FunctionWatch(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            call = by_function.get(getattr(func, "__name__", "").partition(".")[0])
            if call:
                seen.add(call)
            if aside is not None and not handling[0] and not in_effect() and _called_by_code_under_test(func):
                set_aside()  # its operators would run where the operator watch cannot see them
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

    patched = []  # (owner, name, original): what the watch replaces while it runs, put back after
    if library is not None:
        check_python_key()  # a kernel put there before the watch (at import, say)
        for name in _REGISTERING:
            if hasattr(torch._C._DispatchModule, name):
                patched.append((torch._C._DispatchModule, name, getattr(torch._C._DispatchModule, name)))
        patched.append((torch._C, "_dispatch_library", torch._C._dispatch_library))
    if aside is not None:  # torch.ops calls pass no function mode: they are checked here
        for kind in (torch._ops.OpOverload, torch._ops.OpOverloadPacket):
            patched.append((kind, "__call__", kind.__call__))
        patched.append((torch._ops.OpOverload, "redispatch", torch._ops.OpOverload.redispatch))
        patched.append((torch._C._DispatchOperatorHandle, "redispatch_boxed", torch._C._DispatchOperatorHandle.redispatch_boxed))
        patched.append((torch._C, "_dispatch_call_boxed", torch._C._dispatch_call_boxed))
    if mode_route is not None:
        from torch.utils import _python_dispatch

        for owner in (torch._C, _python_dispatch):
            patched.append((owner, "_push_on_torch_dispatch_stack", owner._push_on_torch_dispatch_stack))

    if builders:
        nn.Module.__init__ = watched_init
    try:
        with contextlib.ExitStack() as stack:
            if internals and "torch._dynamo" in sys.modules and matched("torch._dynamo.eval_frame"):
                stack.enter_context(sys.modules["torch._dynamo"].set_stance("force_eager"))
            if by_op or differentiators or internals:
                stack.enter_context(watch)
            if by_function or aside is not None:
                stack.enter_context(FunctionWatch())
            for owner, name, original in patched:  # after the watch's own mode is pushed
                wrap = {"_push_on_torch_dispatch_stack": pushing, "__call__": checked_call, "_dispatch_call_boxed":
                        checked_call, "redispatch": redispatching, "redispatch_boxed": redispatching}.get(name, registering)
                setattr(owner, name, wrap(original))
            yield seen
    finally:
        for owner, name, original in patched:
            setattr(owner, name, original)
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


EARLIER = "(earlier)"  # the name `shares` gives an argument or a result of another call


def run_all(run_case, module, exercise_id, cases, device):
    """Every case's outputs through the chapter's `run_case`, or what the code under test raised on it,
    with what the call did besides (the contract, docs/grading.md):

    - "changed": the case's inputs that were not as they had been once the call was over (an
      argument written in place); a changed input is put back before the next call;
    - "shares": the inputs whose memory the output shares (a view of an argument, or the argument
      itself), and EARLIER where it shares another call's argument or result (a module-level cache);
    - "unsteady": true where the same call, made again after every case in the other order, gave
      another outcome (state kept between calls).

    Every result is kept alive until the end, so no memory it held is reused by a later one and taken
    for sharing."""
    outputs, first, kept = {}, {}, []
    owners = {}  # the storage of every case's input tensors -> (case, input)
    for name, case in cases.items():
        for key, value in case.items():
            for storage in _storages(value):
                owners.setdefault(storage, (name, key))
    returned = set()  # the storage of every result so far
    for order, names in enumerate((list(cases), list(reversed(cases)))):
        for name in names:
            case = cases[name]
            before = copy_inputs(case)
            try:
                value = run_case(module, exercise_id, name, case, device)
                outcome = ("ok", value)
            except Exception as exc:  # the code under test failed on this case
                value, outcome = None, ("raised", describe(exc))
            kept.append(value)
            changed = [key for key, held in before.items() if not _same(case[key], held)]
            # the changed input stays alive (its memory is never reused by a later result and then taken
            # for it), and the copy put back in its place is that case's input too
            kept.extend(case[key] for key in changed)
            case.update({key: before[key] for key in changed})
            for key in changed:
                for storage in _storages(before[key]):
                    owners.setdefault(storage, (name, key))
            shares = []
            for storage in _storages(value):
                owner = owners.get(storage)
                shared = owner[1] if owner is not None and owner[0] == name else (
                    EARLIER if owner is not None or storage in returned else None)
                if shared is not None and shared not in shares:
                    shares.append(shared)
            returned.update(_storages(value))
            if order == 0:
                first[name] = outcome
                outputs[name] = {"ok": encode(value)} if outcome[0] == "ok" else {"raised": outcome[1]}
            elif not _same_outcome(outcome, first[name]):
                outputs[name]["unsteady"] = True
            for field, found in (("changed", changed), ("shares", shares)):
                merged = outputs[name].get(field, []) + [item for item in found if item not in outputs[name].get(field, [])]
                if merged:
                    outputs[name][field] = merged[:20]
    return outputs


def _storages(value):
    """The memory (storage addresses) of every non-empty tensor in a value, through containers."""
    found = set()
    if isinstance(value, torch.Tensor):
        if value.numel():
            found.add(value.untyped_storage().data_ptr())
    elif isinstance(value, dict):
        for item in value.values():
            found |= _storages(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            found |= _storages(item)
    return found


def _same_outcome(now, before):
    """Whether two calls had the same outcome: equal results, or the same exception type."""
    if now[0] != before[0]:
        return False
    if now[0] == "raised":
        return now[1].get("type") == before[1].get("type") and now[1]["kind"] == before[1]["kind"]
    return _same(now[1], before[1])


def copy_inputs(value):
    """A copy of a case's inputs that no call can reach: tensors cloned, lists, tuples and dicts
    copied through; anything else (numbers, strings, dtypes) is immutable or kept as it is."""
    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, dict):
        return {key: copy_inputs(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(copy_inputs(item) for item in value)
    return value


def _same(now, before):
    """Whether an input is as it was: the same type, and for a tensor the same dtype, shape and
    values (NaN where NaN was); containers compared item by item."""
    if type(now) is not type(before):
        return False
    if isinstance(now, torch.Tensor):
        if now.dtype != before.dtype or now.shape != before.shape or now.device != before.device:
            return False
        now = now.detach()
        equal = now == before
        if now.is_floating_point() or now.is_complex():
            equal |= now.isnan() & before.isnan()
        return bool(equal.all())
    if isinstance(now, dict):
        return now.keys() == before.keys() and all(_same(now[key], before[key]) for key in now)
    if isinstance(now, (list, tuple)):
        return len(now) == len(before) and all(_same(a, b) for a, b in zip(now, before))
    if isinstance(now, float) and now != now and before != before:  # NaN where NaN was
        return True
    try:
        return now is before or bool(now == before)
    except Exception:  # noqa: BLE001 (an object that cannot be compared is taken as unchanged)
        return True


def autograd_gradients(forward, leaves, upstream, parameters=None):
    """((name, gradient)...): autograd's gradient of <forward(*leaves), upstream> for a copy of each
    leaf (a tensor the call then reads, requiring grad), then for each named parameter; None where none
    reaches it (cut from the graph by .detach(), .data, a Python number or torch.no_grad()).  A forward
    whose result is not a tensor of upstream's shape in the graph leaves every gradient None."""
    copies = {name: value.clone().requires_grad_(True) for name, value in leaves.items()}
    with torch.enable_grad():
        out = forward(*copies.values())
        if isinstance(out, torch.Tensor) and out.requires_grad and out.shape == upstream.shape:
            out.backward(upstream)
    return (*((name, copy.grad) for name, copy in copies.items()),
            *((name, parameter.grad) for name, parameter in (parameters or {}).items()))


def on_meta(call):
    """What `call` returns on inputs on PyTorch's meta device, as what that shows: each tensor's shape,
    dtype and device (a meta tensor holds no values).  The meta device is the one besides the CPU that
    every machine has, so a result built on the CPU whatever its inputs' device shows without a GPU.
    Where the call reads a value out of a meta tensor (.item(), .tolist(), int(...): torch raises
    NotImplementedError, which is no stub's), what it raised."""
    try:
        return _where(call())
    except NotImplementedError as exc:
        if "meta" not in str(exc):
            raise  # a stub's own
        return ("raised NotImplementedError on meta-device inputs, which hold no values: values were read out "
                "(.item(), .tolist(), int(...)), and a result built from them lands on the CPU")


def _where(value):
    """Each tensor in a value as its dtype, shape and device, through tuples, lists and dicts."""
    if isinstance(value, torch.Tensor):
        return f"a tensor ({str(value.dtype).removeprefix('torch.')}) of shape {list(value.shape)} on {value.device.type}"
    if isinstance(value, (tuple, list)):
        return type(value)(_where(item) for item in value)
    if isinstance(value, dict):
        return {key: _where(item) for key, item in value.items()}
    return value


def describe(exc):
    """A short, student-readable account of an exception raised by their code."""
    if isinstance(exc, NotImplementedError):
        return {"kind": "not_implemented", "message": str(exc)}
    # the student's frames only: the grader's own (probes, importlib, IPython) tell them nothing
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if f.filename.startswith("/submission/") or f.filename.startswith("<ipython-input")]
    text = "".join(traceback.format_list(frames)) + "".join(traceback.format_exception_only(type(exc), exc))
    return {"kind": "exception", "type": type(exc).__name__, "message": str(exc)[:1000], "traceback": text[-3000:]}

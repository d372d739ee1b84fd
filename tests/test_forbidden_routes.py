"""Forbidden means unreachable, not only watched: every route to a forbidden result that torch itself
offers, run in-process under `probes.watching` with the real forbids of the exercise (the catalogues,
tests/test_catalogues.py, prove the same through the sandboxed worker for one body per route).

Routes: torch's Python reference implementations and decompositions (torch._refs, torch._decomp,
torch._prims), composites the dispatcher decomposes before the operator watch sees them
(torch.rms_norm, the math SDPA, infinitely_differentiable_gelu_backward), torch.distributions,
F.multi_head_attention_forward, and the tracers and compilers (torch.jit.trace / script, make_fx,
torch.compile).  And the converse: the reference bodies, and the watch's own bookkeeping, are never
mistaken for one."""

import dataclasses
import math

import pytest
import torch
import torch.nn.functional as F

from autograder import engine, probes, registry

from conftest import BESIDE_A_SHORTCUT, needs_bubblewrap

GENERIC = registry.INTERNAL_ROUTES.call


def forbids(exercise_id):
    return [dataclasses.asdict(entry) for entry in registry.exercise(exercise_id).forbids]


def own_call(exercise_id):
    """The exercise's own forbidden call (the first Forbidden of its entry, not the generic one)."""
    return registry.exercise(exercise_id).forbids[0].call


def watched(exercise_id, route):
    with torch.no_grad(), probes.watching(forbids(exercise_id)) as seen:
        route()
    return seen


X = torch.randn(2, 3, 4, generator=torch.Generator().manual_seed(0))
W, B = torch.rand(4) + 0.5, torch.randn(4)
IDS = torch.tensor([[0, 2, 1], [3, 3, 0]])
TABLE = torch.randn(5, 4)
LOGITS, TARGETS = torch.randn(6, 5), torch.tensor([0, 1, 2, 3, 4, 0])


def _stats(x):
    mean = x.mean(-1, keepdim=True)
    return mean, torch.rsqrt(x.var(-1, unbiased=False, keepdim=True) + 1e-5)


D = torch._decomp.decompositions
# (exercise, route seen by the generic entry, body): before this watch, each was seen by nothing
INTERNAL_ROUTES = [
    ("unigram_cross_entropy", "torch._refs.log_softmax", lambda: torch._refs.log_softmax(LOGITS, 1)),
    ("unigram_cross_entropy", "torch._refs.nn.functional.nll_loss", lambda: torch._refs.nn.functional.nll_loss(LOGITS, TARGETS)),
    ("unigram_cross_entropy", "torch._decomp.decompositions._log_softmax", lambda: D._log_softmax(LOGITS, 1, False)),
    ("unigram_cross_entropy", "torch._decomp.decompositions.nll_loss_forward",
     lambda: D.nll_loss_forward(LOGITS, TARGETS, None, 1, -100)),
    ("embed", "torch._decomp.decompositions.embedding", lambda: D.embedding(TABLE, IDS)),
    ("embed", "torch._decomp.decompositions.embedding",  # the table torch itself dispatches from
     lambda: torch._decomp.decomposition_table[torch.ops.aten.embedding.default](TABLE, IDS)),
    ("embedding_grad", "torch._decomp.decompositions.embedding_dense_backward",
     lambda: D.embedding_dense_backward(torch.ones(2, 3, 4), IDS, 5, -1, False)),
    ("add_positions", "torch._decomp.decompositions.embedding", lambda: D.embedding(TABLE, torch.arange(3))),
    ("stable_softmax", "torch._refs.softmax", lambda: torch._refs.softmax(X, -1)),
    ("stable_softmax", "torch._decomp.decompositions._softmax", lambda: D._softmax(X, -1, False)),
    ("stable_softmax", "torch._prims.exp", lambda: torch.ops.prims.exp(X)),  # a prims operator, by torch.ops
    ("attention", "torch._decomp.decompositions.scaled_dot_product_flash_attention_for_cpu",
     lambda: D.scaled_dot_product_flash_attention_for_cpu(X[None], X[None], X[None])),
    ("layer_norm", "torch._refs.native_layer_norm", lambda: torch._refs.native_layer_norm(X, (4,), W, B, 1e-5)),
    ("layer_norm", "torch._refs.native_layer_norm",
     lambda: torch._decomp.decomposition_table[torch.ops.aten.native_layer_norm.default](X, (4,), W, B, 1e-5)),
    ("layer_norm", "torch._decomp.decompositions.native_batch_norm",
     lambda: D.native_batch_norm(X.reshape(1, 6, 4), None, None, None, None, True, 0.0, 1e-5)),
    ("layer_norm", "torch._prims.var", lambda: torch.ops.prims.var(X, [2], 0)),
    ("gelu", "torch._refs.nn.functional.gelu", lambda: torch._refs.nn.functional.gelu(X)),
    ("layer_norm_backward", "torch._decomp.decompositions.native_layer_norm_backward",
     lambda: D.native_layer_norm_backward(X, X, [4], *_stats(X), W, B, [True] * 3)),
    ("gelu_backward", "torch._decomp.decompositions.gelu_backward", lambda: D.gelu_backward(X, X)),
    ("gelu_backward", "torch._decomp.decompositions.gelu_backward",
     lambda: torch._decomp.decomposition_table[torch.ops.aten.gelu_backward.default](X, X)),
]


@pytest.mark.parametrize("exercise_id, route, body", INTERNAL_ROUTES, ids=[f"{e}-{r}" for e, r, _ in INTERNAL_ROUTES])
def test_torch_internal_implementations_are_seen_and_named(exercise_id, route, body):
    seen = watched(exercise_id, body)
    assert GENERIC in seen and f"{GENERIC}\t{route}" in seen, seen


def _rebuilt_elsewhere():
    """torch._refs' gelu rebuilt as a function of a module of one's own (its globals renamed, as a file
    loaded again by path would be): the code still says which file of torch it was compiled from."""
    import inspect
    import types

    original = inspect.unwrap(torch._refs.nn.functional.gelu)
    clone = types.FunctionType(original.__code__, dict(original.__globals__, __name__="my_own_helpers"), "mine")
    return clone(X, "none")


def test_an_internal_function_rebuilt_under_another_name_is_still_seen():
    seen = watched("gelu", _rebuilt_elsewhere)
    assert f"{GENERIC}\ttorch._refs.nn.functional.gelu" in seen, seen


# composites and other built-ins that compute the forbidden result from elementary operators: each is
# now part of the exercise's own forbidden call (registry: `functions`, `internals`, more `ops`)
def _math_sdpa():
    from torch.nn.attention import SDPBackend, sdpa_kernel

    with sdpa_kernel(SDPBackend.MATH):
        return F.scaled_dot_product_attention(X[None], X[None], X[None])


OWN_CALL_ROUTES = [
    ("unigram_cross_entropy", "Categorical.log_prob",
     lambda: torch.distributions.Categorical(probs=torch.rand(5)).log_prob(TARGETS)),
    ("embed", "F.embedding_bag", lambda: F.embedding_bag(IDS.reshape(-1, 1), TABLE, mode="sum")),
    ("embedding_grad", "aten.embedding_sparse_backward",
     lambda: torch.ops.aten.embedding_sparse_backward(torch.ones(2, 3, 4), IDS, 5, -1, False).to_dense()),
    ("stable_softmax", "torch._masked_softmax", lambda: torch._masked_softmax(X, torch.zeros_like(X, dtype=torch.bool))),
    ("attention", "the math SDPA backend", _math_sdpa),
    ("attention", "aten._scaled_dot_product_attention_math",
     lambda: torch.ops.aten._scaled_dot_product_attention_math(X[None], X[None], X[None])),
    ("attention", "F.multi_head_attention_forward",
     lambda: F.multi_head_attention_forward(X, X, X, 4, 2, torch.eye(12, 4), None, None, None, False, 0.0,
                                            torch.eye(4), None, training=False, need_weights=True)),
    ("layer_norm", "torch.rms_norm of the centred input",
     lambda: torch.rms_norm(X - X.mean(-1, keepdim=True), (4,), W, 1e-5)),
    ("layer_norm", "nn.functional.rms_norm", lambda: F.rms_norm(X, (4,))),
    ("layer_norm", "_batch_norm_with_update",
     lambda: torch.ops.aten._batch_norm_with_update(X.reshape(1, 6, 4), None, None, torch.zeros(6), torch.ones(6),
                                                    0.1, 1e-5)),
    ("gelu", "aten.gelu_", lambda: torch.ops.aten.gelu_(X.clone())),
    ("gelu_backward", "aten.infinitely_differentiable_gelu_backward",
     lambda: torch.ops.aten.infinitely_differentiable_gelu_backward(X, X)),
]


@pytest.mark.parametrize("exercise_id, name, body", OWN_CALL_ROUTES, ids=[f"{e}-{n}" for e, n, _ in OWN_CALL_ROUTES])
def test_composites_and_other_built_ins_are_the_exercise_s_own_call(exercise_id, name, body):
    seen = watched(exercise_id, body)
    assert own_call(exercise_id) in seen, seen


# tracers and compilers: refused, not trusted (their operators may run from C++ or as compiled code)
def _scripted():
    @torch.jit.script
    def softmax(s: torch.Tensor) -> torch.Tensor:
        e = (s - s.amax(dim=-1, keepdim=True)).exp()
        return e / e.sum(dim=-1, keepdim=True)

    return softmax


def _traced():
    return torch.jit.trace(lambda s: 0.5 * s * (1.0 + torch.erf(s / math.sqrt(2.0))), (X,))


def _make_fx():
    from torch.fx.experimental.proxy_tensor import make_fx

    return make_fx(lambda s: 0.5 * s * (1.0 + torch.erf(s / math.sqrt(2.0))))(X)(X)


def test_torchscript_is_refused_even_when_compiled_before_the_watch():
    scripted, traced = _scripted(), _traced()  # as a module would at import, before any probe runs
    assert f"{GENERIC}\ttorch.jit.ScriptFunction" in watched("stable_softmax", lambda: scripted(X))
    assert f"{GENERIC}\ttorch.jit.ScriptFunction" in watched("gelu", lambda: traced(X))
    # traced under the watch (no Python numbers: the tracer turns those into operators of its own)
    assert f"{GENERIC}\ttorch.jit._trace.trace" in watched("gelu", lambda: torch.jit.trace(
        lambda s: s * torch.sigmoid(s), (X,))(X))
    # and the watch leaves TorchScript as it found it
    assert torch._C.ScriptFunction.__call__.__name__ == "__call__"
    with probes.watching([]) as seen:
        scripted(X)
    assert seen == set()


def test_make_fx_and_graph_modules_are_refused():
    seen = watched("gelu", _make_fx)
    assert f"{GENERIC}\ttorch.fx.experimental.proxy_tensor._MakefxTracer.trace" in seen, seen
    assert f"{GENERIC}\ttorch.fx.graph_module._WrappedCall.__call__" in seen, seen


def test_torch_compile_is_refused_even_when_compiled_before_the_watch():
    compiled = torch.compile(lambda s: 0.5 * s * (1.0 + torch.erf(s / math.sqrt(2.0))), backend="eager")
    compiled(X)  # compiled and cached before the watch, as a module could at import
    seen = watched("gelu", lambda: compiled(X))
    assert GENERIC in seen and any(s.startswith(f"{GENERIC}\ttorch._dynamo.") for s in seen), seen
    assert watched("gelu", lambda: torch.compile(torch.sin, backend="eager")(X)) >= {GENERIC}
    # the stance the watch sets while it runs is undone
    assert torch._dynamo.eval_frame._stance.stance == "default"


def test_hand_written_bodies_and_the_references_are_never_a_route():
    """The reference body of every forbidding exercise, in-process under its watch: nothing is seen
    (with dynamo imported too: it then wraps every dispatch mode in frames of its own)."""
    import torch._dynamo  # noqa: F401

    for exercise in registry.all_exercises():
        if not exercise.forbids:
            continue
        module = engine.reference_module(exercise.id)
        chapter = registry.assignment_of(exercise.id).part("probes")
        with probes.watching(forbids(exercise.id)) as seen:
            outputs = probes.run_all(chapter.run_case, module, exercise.id,
                                     engine.fresh_copy(engine.cases_of(exercise.id)), "cpu")
        assert seen == set(), (exercise.id, seen)
        assert all("ok" in output or output["raised"]["type"] == "ValueError" for output in outputs.values()), \
            (exercise.id, outputs)


def test_the_feedback_names_only_routes_under_the_registry_s_own_prefixes():
    generic = registry.INTERNAL_ROUTES
    assert engine._forbidden_route(generic, [generic.call, f"{generic.call}\ttorch._refs.softmax"]) == \
        ("（经由 torch._refs.softmax）", " (through torch._refs.softmax)")
    for forged in ("torch.secret.value", "torch._refs.softmax\x1b[31m", "os.system", "torch._refs." + "x" * 300,
                   "torch._refsX.softmax"):
        assert engine._forbidden_route(generic, [generic.call, f"{generic.call}\t{forged}"]) == ("", ""), forged


# operators, kernels and dispatch modes of one's own: torch runs their Python code with the operator
# watch set aside (the watch runs an operator with itself popped), so whatever that code calls is unseen;
# each counts as the generic entry, named through registry.LIBRARY_ROUTE or registry.MODE_ROUTE
LIBRARY = f"{GENERIC}\t{registry.LIBRARY_ROUTE}"
MODE = f"{GENERIC}\t{registry.MODE_ROUTE}"


def _layer_norm(t):
    return F.layer_norm(t, (t.shape[-1],))


def _layer_norm_backward(g, t):
    mean, rstd = _stats(t.reshape(-1, 4))
    return torch.ops.aten.native_layer_norm_backward(g.reshape(-1, 4), t.reshape(-1, 4), [4], mean, rstd, W, B,
                                                    [True, False, False])[0].reshape(t.shape)


@pytest.fixture
def libraries():
    """torch.library registrations made by a test, destroyed after it, pass or fail (an IMPL on aten would
    otherwise replace torch's kernel for every later test of this process)."""
    made = []

    def library(*args):
        made.append(torch.library.Library(*args))
        return made[-1]
    yield library
    for library in made:
        library._destroy()


def _defined(library, namespace, key, kernel):
    """An operator `<namespace>::f(Tensor x) -> Tensor` whose `key` kernel is `kernel`."""
    lib = library(namespace, "DEF")
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", kernel, key)
    return getattr(torch.ops, namespace).f


KERNEL_KEYS = ["CPU", "CompositeExplicitAutograd"]  # run below the watch's key (Autograd and
# CompositeImplicitAutograd kernels run above it, where the watch sees what they call: checked below)


@pytest.mark.parametrize("key", KERNEL_KEYS)
@pytest.mark.parametrize("exercise_id, kernel", [("layer_norm", _layer_norm), ("gelu", F.gelu),
                                                 ("layer_norm_backward", lambda t: _layer_norm_backward(t, t)),
                                                 ("gelu_backward", lambda t: torch.ops.aten.gelu_backward(t, t))])
def test_an_operator_of_one_s_own_is_seen_whether_defined_before_or_under_the_watch(libraries, key, exercise_id,
                                                                                      kernel):
    op = _defined(libraries, f"hero_test_{key.lower()}", key, kernel)  # as at a module's import, before the watch
    assert LIBRARY in watched(exercise_id, lambda: op(X))
    # defined while the watch runs, as a body would on its first call
    seen = watched(exercise_id, lambda: _defined(libraries, f"hero_test_late_{key.lower()}", key, kernel)(X))
    assert LIBRARY in seen, seen


def test_custom_op_and_register_kernel_are_seen():
    @torch.library.custom_op("hero_test_custom::gelu", mutates_args=())
    def gelu(t: torch.Tensor) -> torch.Tensor:
        return F.gelu(t)

    torch.library.define("hero_test_registered::gelu_backward", "(Tensor g, Tensor x) -> Tensor")
    torch.library.register_kernel("hero_test_registered::gelu_backward", "cpu",
                                  lambda g, t: torch.ops.aten.gelu_backward(g, t))
    assert LIBRARY in watched("gelu", lambda: gelu(X))
    assert LIBRARY in watched("gelu_backward", lambda: torch.ops.hero_test_registered.gelu_backward(X, X))


def test_a_kernel_of_torch_s_own_replaced_is_seen_and_the_watch_forgets_it_once_undone(libraries):
    sinh = torch.sinh(X)
    aten = libraries("aten", "IMPL")
    aten.impl("sinh", _layer_norm, "CPU")  # torch.sinh now computes LayerNorm
    seen = watched("layer_norm", lambda: torch.sinh(X))
    assert LIBRARY in seen, seen
    aten._destroy()
    assert torch.equal(torch.sinh(X), sinh)
    assert watched("layer_norm", lambda: torch.sinh(X)) == set()


def test_a_fallthrough_on_the_python_key_is_seen_though_no_mode_sees_the_operator(libraries):
    aten = libraries("aten", "IMPL")
    aten.impl("sinh", torch.library.fallthrough_kernel, "Python")  # no dispatch mode sees torch.sinh now
    aten.impl("sinh", F.gelu, "CPU")
    assert LIBRARY in watched("gelu", lambda: torch.sinh(X))  # before the watch
    aten._destroy()
    assert watched("gelu", lambda: torch.sinh(X)) == set()

    def hide_then_call():
        late = libraries("aten", "IMPL")
        late.impl("sinh", torch.library.fallthrough_kernel, "Python")
        late.impl("sinh", F.gelu, "CPU")
        return torch.sinh(X)
    assert LIBRARY in watched("gelu", hide_then_call)  # under the watch


def test_kernels_above_the_watch_s_key_are_seen_as_the_call_they_make(libraries):
    """An Autograd or CompositeImplicitAutograd kernel runs before the watch's key: what it calls is seen
    as itself (the catalogue need not name a route for these)."""
    for key in ("Autograd", "CompositeImplicitAutograd"):
        op = _defined(libraries, f"hero_test_above_{key.lower()}", key, _layer_norm)
        assert own_call("layer_norm") in watched("layer_norm", lambda: op(X)), key


class _Answer(torch.utils._python_dispatch.TorchDispatchMode):
    """A dispatch mode of one's own that answers torch.sin with LayerNorm."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func is torch.ops.aten.sin.default:
            return _layer_norm(args[0])
        return func(*args, **(kwargs or {}))


def test_a_dispatch_mode_of_one_s_own_is_seen_above_or_below_the_watch():
    def entered_inside():
        with _Answer():
            return torch.sin(X)
    assert MODE in watched("layer_norm", entered_inside)
    with _Answer():  # pushed before the watch (at import, say): below it, it runs what the watch passes on
        seen = watched("layer_norm", lambda: torch.sin(X))
    assert MODE in seen, seen


def test_the_watch_puts_back_what_it_replaces_and_trusts_torch_s_own_operators():
    before = {name: getattr(torch._C._DispatchModule, name) for name in probes._REGISTERING
              if hasattr(torch._C._DispatchModule, name)}
    pushes = (torch._C._push_on_torch_dispatch_stack, torch.utils._python_dispatch._push_on_torch_dispatch_stack)
    library = torch._C._dispatch_library
    with probes.watching(forbids("layer_norm")):
        assert torch._C._dispatch_library is not library
    assert torch._C._dispatch_library is library
    assert (torch._C._push_on_torch_dispatch_stack, torch.utils._python_dispatch._push_on_torch_dispatch_stack) == pushes
    assert all(getattr(torch._C._DispatchModule, name) is method for name, method in before.items())
    # torch's own operators, modes and Python-registered ones (prims are refused as torch._prims, not here)
    assert watched("layer_norm", lambda: torch.sin(X) + X) == set()
    assert probes._torch_s_own(torch.ops.aten.add.Tensor) and probes._torch_s_own(torch.ops.prims.var.default)


# torch._C's dispatch guards and the dispatch-mode stack: code that sets the operator watch aside itself.
# A torch function (function watch) or a torch.ops call made there by the code under test is seen
ASIDE = f"{GENERIC}\t{registry.ASIDE_ROUTE}"
PYTHON_KEY = torch._C.DispatchKeySet(torch._C.DispatchKey.Python)


def _guarded(guard, body):
    def run():
        with guard():
            return body()
    return run


def _popped(body):
    def run():
        mode = torch._C._pop_torch_dispatch_stack(None)
        try:
            return body()
        finally:
            torch._C._push_on_torch_dispatch_stack(mode)
    return run


def _native_layer_norm_backward():
    return _layer_norm_backward(X, X)


GUARDS = [("_DisableTorchDispatch", torch._C._DisableTorchDispatch),
          ("_ExcludeDispatchKeyGuard(Python)", lambda: torch._C._ExcludeDispatchKeyGuard(PYTHON_KEY)),
          ("_disable_current_modes", torch.utils._python_dispatch._disable_current_modes)]
CALLS = [("layer_norm", "F.layer_norm", lambda: F.layer_norm(X, (4,))),
         ("layer_norm", "an nn.LayerNorm built before", lambda m=torch.nn.LayerNorm(4): m(X)),
         ("gelu", "Tensor method", lambda: X.sigmoid() * X),
         ("gelu_backward", "torch.ops.aten.gelu_backward", lambda: torch.ops.aten.gelu_backward(X, X)),
         ("layer_norm_backward", "torch.ops.aten.native_layer_norm_backward", _native_layer_norm_backward),
         ("gelu_backward", "torch._C._dispatch_call_boxed", lambda: torch._C._dispatch_call_boxed(
             torch._C._dispatch_find_schema_or_throw("aten::gelu_backward", ""), X, X))]


@pytest.mark.parametrize("guard", [g for _, g in GUARDS] + [None], ids=[n for n, _ in GUARDS] + ["popped"])
@pytest.mark.parametrize("exercise_id, name, call", CALLS, ids=[n for _, n, _ in CALLS])
def test_a_call_made_where_the_watch_is_set_aside_is_seen(guard, exercise_id, name, call):
    seen = watched(exercise_id, _guarded(guard, call) if guard else _popped(call))
    assert ASIDE in seen, seen


def test_redispatch_below_the_watch_is_seen():
    below = torch._C.DispatchKeySet(torch._C.DispatchKey.CPU)
    norm = torch.ops.aten.native_layer_norm.default
    assert ASIDE in watched("layer_norm", lambda: norm.redispatch(below, X, [4], W, B, 1e-5))
    assert ASIDE in watched("layer_norm", lambda: norm._handle.redispatch_boxed(below, X, [4], W, B, 1e-5))


def test_a_composite_that_reaches_the_watch_is_decomposed_under_it():
    """With the autograd keys set aside, F.layer_norm reaches the watch as aten.layer_norm (a composite,
    normally decomposed above it): the watch decomposes it under itself and sees native_layer_norm."""
    seen = watched("layer_norm", _guarded(torch._C._AutoDispatchBelowAutograd, lambda: F.layer_norm(X, (4,))))
    assert own_call("layer_norm") in seen, seen
    with torch.inference_mode():
        assert own_call("layer_norm") in watched("layer_norm", lambda: F.layer_norm(X, (4,)))
        assert torch.allclose(watched_value("layer_norm", lambda: F.layer_norm(X, (4,))), F.layer_norm(X, (4,)))


def watched_value(exercise_id, body):
    with probes.watching(forbids(exercise_id)):
        return body()


def test_honest_code_that_sets_nothing_aside_is_not_a_route(capsys):
    """Printing a tensor (torch's printer sets the dispatch modes aside itself), inference mode, a module
    built and called, torch.ops calls of allowed operators: nothing is seen."""
    def honest():
        print(X, repr(X[0]), f"{X.sum():.3f}")
        with torch.inference_mode():
            centred = X - X.mean(-1, keepdim=True)
        linear = torch.nn.Linear(4, 4)
        return torch.ops.aten.mul(linear(centred), 2.0)
    for exercise_id in ("gelu", "gelu_backward", "stable_softmax"):
        assert watched(exercise_id, honest) == set(), exercise_id
    assert "tensor(" in capsys.readouterr().out


IMPORT_TIME_OPERATORS = '''
_hero_library = torch.library.Library("hero_at_import", "DEF")  # at the module's import, before any watch
_hero_library.define("layer_norm(Tensor x, Tensor weight, Tensor bias, float eps) -> Tensor")
_hero_library.impl("layer_norm", lambda x, w, b, eps: F.layer_norm(x, (x.shape[-1],), w, b, eps), "CPU")


@torch.library.custom_op("hero_at_import::gelu", mutates_args=())
def _hero_gelu(t: torch.Tensor) -> torch.Tensor:
    return F.gelu(t)


class LayerNorm(nn.Module):'''


def test_operators_defined_at_the_module_s_import_lose_their_exercises_through_the_grader(submission, grade):
    """The worker imports the student's module before the watch starts: what it registers then is seen
    when the probes run it (an operator of its own, a custom_op), through the real sandboxed grader."""
    folder = submission(edits={"hero_transformer/model.py": [
        ("\nclass LayerNorm(nn.Module):", IMPORT_TIME_OPERATORS),
        ("        return centered / torch.sqrt(variance + self.eps) * self.weight + self.bias",
         "        return torch.ops.hero_at_import.layer_norm(x, self.weight, self.bias, self.eps)"),
        ("    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))", "    return _hero_gelu(x)")]})
    report = grade(folder)
    assert {item.id for item in report.items if item.score < item.max_score} == {"layer_norm", "gelu"}, \
        [(item.id, item.feedback_en) for item in report.items if item.score < item.max_score]
    for exercise_id in ("layer_norm", "gelu"):
        item = report.item(exercise_id)
        assert {check.name for check in item.checks if not check.passed} - BESIDE_A_SHORTCUT == \
            {"uses no forbidden shortcut"}
        assert f"(through {registry.LIBRARY_ROUTE})" in item.feedback_en, item.feedback_en


SET_ASIDE_ROUTES = (registry.LIBRARY_ROUTE, registry.MODE_ROUTE, registry.ASIDE_ROUTE)
AS_USER_SCRIPT = '''
import json, sys
from pathlib import Path
from autograder import engine
from autograder.sandbox import WorkerPool
jobs = json.loads(sys.argv[1])  # [[assignment id, sample folder, exercise or ""], ...]
# the watch's part alone: these bodies also name torch._C or globals, which reach.py charges first
engine.reaches_by_exercise = lambda files, assignment: {e.id: [] for e in assignment.exercises}
pool = WorkerPool()
try:
    found = []
    for assignment_id, folder, exercise_id in jobs:
        report = engine.grade(Path(folder), assignment_id, pool=pool)
        found.append({"score": report.score, "max": report.max_score,
                      "lost": sorted(item.id for item in report.items if item.score < item.max_score),
                      "feedback": report.item(exercise_id).feedback_en if exercise_id else ""})
finally:
    pool.close()
print(json.dumps(found))
'''


@needs_bubblewrap
def test_the_set_aside_routes_lose_as_an_ordinary_user_too():
    """The catalogue bodies of these routes (chapters 5 and 6), graded by a grader run as an ordinary user
    (tests/test_hostile.py's machinery), lose exactly their exercise and name their route; the
    references keep full marks."""
    import json
    import os
    import subprocess
    import sys
    import tempfile

    from conftest import SAMPLE_ROOTS
    from test_hostile import TEST_USER, _as_user_prefix, _ensure_user

    if os.geteuid() != 0:
        pytest.skip("switching to the ordinary user needs root")
    jobs, expected = [], []
    for assignment_id in ("ch05_block", "ch06_backward"):
        if assignment_id not in SAMPLE_ROOTS:
            continue
        folder = SAMPLE_ROOTS[assignment_id]
        jobs.append([assignment_id, str(folder / "reference"), ""])
        expected.append(None)
        for entry in registry.ASSIGNMENTS[assignment_id].entries("forbidden"):
            if entry.route in SET_ASIDE_ROUTES:
                jobs.append([assignment_id, str(folder / entry.sample), entry.exercise])
                expected.append(entry)
    if not jobs:
        pytest.skip("chapters 5 and 6 are not among HERO_TEST_ASSIGNMENTS")
    _ensure_user(TEST_USER)
    work = tempfile.mkdtemp(prefix="hero-routes-user-")
    try:
        os.chmod(work, 0o755)
        done = subprocess.run([*_as_user_prefix(TEST_USER, work), sys.executable, "-c", AS_USER_SCRIPT, json.dumps(jobs)],
                              capture_output=True, text=True, timeout=1200, cwd=work,
                              env=dict(os.environ, PYTHONPATH=str(registry.REPO_ROOT), TMPDIR=work))
    finally:
        subprocess.run(["rm", "-rf", work], check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(done.stdout.strip().splitlines()[-1])
    for entry, result in zip(expected, results):
        if entry is None:
            assert result["score"] == result["max"] and result["lost"] == [], result
        else:
            assert result["lost"] == [entry.exercise], (entry.id, result)
            assert f"(through {entry.route})" in result["feedback"], (entry.id, result["feedback"])

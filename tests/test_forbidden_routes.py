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

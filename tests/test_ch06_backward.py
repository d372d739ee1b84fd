"""Chapter 6's own figures: the answers worked out a second way (plain Python), none of their
values printed in the student's notebook, each known mistake distinct from the expected value
and named by the grader; the walkthrough's numbers; the generic autograd watch
(registry.Forbidden(autograd=True)) seeing automatic differentiation by every route and nothing
else; the sublayer's test doubles being gradients of other functions."""

import json
import math

import pytest
import torch

from autograder import engine, probes, registry
from autograder.reference import load

ASSIGNMENT = registry.ASSIGNMENTS["ch06_backward"]
EPS = 1e-5


def cdf(u):
    return 0.5 * (1 + math.erf(u / math.sqrt(2)))


def density(u):
    return math.exp(-u * u / 2) / math.sqrt(2 * math.pi)


def slope(u):
    return cdf(u) + u * density(u)


def ln_grad_x(x, g):
    d = len(x)
    mu = sum(x) / d
    var = sum((v - mu) ** 2 for v in x) / d
    sigma = math.sqrt(var + EPS)
    xhat = [(v - mu) / sigma for v in x]
    mg, mgx = sum(g) / d, sum(a * b for a, b in zip(g, xhat)) / d
    return [(gi - mg - xh * mgx) / sigma for gi, xh in zip(g, xhat)], xhat


def jacobian(x):
    """y = x + (1/2) GELU(LN(x)) with W1 = I, W2 = I/2: row i is the gradient of y_i."""
    d = len(x)
    rows = []
    for i in range(d):
        e = [1.0 if j == i else 0.0 for j in range(d)]
        _, xhat = ln_grad_x(x, e)
        upstream = [0.5 * slope(xhat[k]) * e[k] for k in range(d)]  # back through W2 = I/2 and GELU
        branch, _ = ln_grad_x(x, upstream)
        rows.append([e[j] + branch[j] for j in range(d)])
    return [v for row in rows for v in row]


def test_the_answers_are_what_their_questions_ask():
    approx = pytest.approx
    X, dY = [[1.0, 0.0, 2.0], [-1.0, 3.0, 1.0]], [[1.0, -2.0], [0.5, 1.0]]
    dW = [sum(dY[t][o] * X[t][i] for t in range(2)) for o in range(2) for i in range(3)]
    assert engine.expected_answer("linear_grad_weight") == approx(dW, abs=1e-12)
    assert dW == [0.5, 1.5, 2.5, -3.0, 3.0, -3.0]
    assert engine.expected_answer("gelu_slope") == approx(slope(-0.8), abs=1e-12)
    assert engine.expected_answer("gelu_slope") < 0  # GELU falls there
    grad, _ = ln_grad_x([2.0, -1.0, 0.0, 3.0], [1.0, 0.0, 0.0, 0.0])
    assert engine.expected_answer("ln_grad_x") == approx(grad, abs=1e-12)
    grad, xhat = ln_grad_x([1.0, 1.002, 1.004], [0.0, 0.0, 1.0])
    leak = sum(a * b for a, b in zip(grad, xhat))
    var = sum((v - 1.002) ** 2 for v in (1.0, 1.002, 1.004)) / 3
    assert leak == approx(xhat[2] * EPS / ((var + EPS) * math.sqrt(var + EPS)), rel=1e-9)
    assert engine.expected_answer("ln_scale_leak") == approx(leak, rel=1e-9)
    assert engine.expected_answer("residual_slope") == approx(math.tanh(0.5) ** 2, abs=1e-12)
    assert engine.expected_answer("sublayer_jacobian") == approx(jacobian([-1.0, 0.0, 2.0]), abs=1e-12)


def _released_text():
    path = registry.REPO_ROOT / registry.RELEASE_DIR / ASSIGNMENT.id / ASSIGNMENT.notebook_name
    notebook = json.loads(path.read_text(encoding="utf-8"))
    return "\n".join("".join(c["source"]) if isinstance(c["source"], list) else c["source"] for c in notebook["cells"])


def _numbers(value):
    if isinstance(value, (list, tuple)):
        return [n for item in value for n in _numbers(item)]
    return [value]


def _renderings(number):
    if isinstance(number, int) or float(number).is_integer():
        n = int(number)
        return {str(n), f"{n:,}"} if abs(n) >= 10 else set()  # small integers are everywhere
    found = set()
    for places in range(3, 8):
        text = f"{number:.{places}f}"
        if text.rstrip("0").rstrip(".") not in ("0", "-0", "1", "-1"):
            found.add(text)
    return found


def test_no_answer_value_is_written_in_the_student_notebook():
    text = _released_text()
    for answer in ASSIGNMENT.answers:
        for number in _numbers(engine.expected_answer(answer.id)):
            shown = [r for r in _renderings(number) if r in text]
            assert not shown, (answer.id, shown)


@pytest.mark.parametrize("answer", ASSIGNMENT.answers, ids=lambda a: a.id)
def test_each_mistake_differs_and_is_named(answer):
    assert 1 <= len(answer.mistakes) <= 3
    expected = engine.expected_answer(answer.id)
    points = ASSIGNMENT.points()[answer.id]
    for mistake, value in zip(answer.mistakes, engine.mistake_values(answer.id)):
        assert engine._answer_problem(answer, value, expected) is not None, mistake.en
        body = {"values": {answer.variable: {"ok": probes.encode(value)}}, "cell_failures": []}
        reply = {"status": "ok", "payload": {"body": body}, "output_tail": ""}
        result = engine.judge_answer(answer, points, reply, None)
        assert result.score == 0 and mistake.en in result.feedback_en and mistake.zh in result.feedback_zh
    body = {"values": {answer.variable: {"ok": probes.encode(expected)}}, "cell_failures": []}
    reply = {"status": "ok", "payload": {"body": body}, "output_tail": ""}
    assert engine.judge_answer(answer, points, reply, None).score == points


def test_points_and_items():
    points = ASSIGNMENT.points()
    assert {e.id: points[e.id] for e in ASSIGNMENT.exercises} == {
        "layer_norm_backward": 3, "gelu_backward": 2, "linear_backward": 2, "residual_backward": 2,
        "feedforward_sublayer_backward": 3}
    assert all(points[a.id] == 1 for a in ASSIGNMENT.answers) and 5 <= len(ASSIGNMENT.answers) <= 9


def test_the_walkthrough_numbers():
    """Seed 000's worked example 1 seen backwards: the branch's Jacobian at x = (1, 3) is of order
    eps (d = 2 leaves LayerNorm only its eps term), so dy/dx is the identity to 3e-6."""
    alpha = 1 / math.sqrt(1 + EPS)
    assert slope(alpha) == pytest.approx(1.0833143, abs=1e-7) and slope(-alpha) == pytest.approx(-0.0833143, abs=1e-7)
    grad, xhat = ln_grad_x([1.0, 3.0], [1.0, 0.0])
    assert grad[0] == pytest.approx(5.0e-6, abs=1e-9) and sum(grad) == pytest.approx(0, abs=1e-18)
    J = jacobian([1.0, 3.0])
    assert J == pytest.approx([0.9999998, 2.08e-7, -2.708e-6, 1.0000027], abs=1e-7)
    grad, _ = ln_grad_x([1.0, 4.0, 7.0], [1.0, 0.0, 0.0])
    assert grad == pytest.approx([0.0680417, -0.1360827, 0.0680410], abs=1e-7)


# --- the generic autograd watch (registry.Forbidden(autograd=True), probes.watching) ---------


WATCH = [{"call": "autodiff", "ops": (), "builds_modules": False, "autograd": True}]


def _backward_call(x):
    leaf = x.clone().requires_grad_()
    (leaf * leaf).sum().backward()
    return leaf.grad


ROUTES = {
    "Tensor.backward": _backward_call,
    "torch.autograd.grad": lambda x: _autograd_grad(x),
    "torch.autograd.functional.vjp": lambda x: torch.autograd.functional.vjp(torch.tanh, x, torch.ones_like(x)),
    "torch.autograd.functional.jacobian": lambda x: torch.autograd.functional.jacobian(torch.exp, x),
    "torch.func.grad": lambda x: torch.func.grad(lambda t: (t * t).sum())(x),
    "torch.func.vjp": lambda x: torch.func.vjp(torch.sin, x)[1](torch.ones_like(x)),
    "torch.func.jvp (forward mode)": lambda x: torch.func.jvp(torch.sin, (x,), (torch.ones_like(x),)),
    "forward_ad.dual_level": lambda x: _dual(x),
}


def _autograd_grad(x):
    leaf = x.clone().requires_grad_()
    return torch.autograd.grad((leaf.sin() * leaf).sum(), leaf)


def _dual(x):
    import torch.autograd.forward_ad as forward_ad

    with forward_ad.dual_level():
        return forward_ad.unpack_dual(torch.sin(forward_ad.make_dual(x, torch.ones_like(x)))).tangent


@pytest.mark.parametrize("route", list(ROUTES))
def test_the_autograd_watch_sees_every_route(route):
    x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64)
    with probes.watching(WATCH) as seen:
        ROUTES[route](x)
    assert seen == {"autodiff"}


def test_the_autograd_watch_ignores_hand_written_gradients_and_forward_graphs():
    x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64)
    backward = load("backward")
    with probes.watching(WATCH) as seen:
        backward.layer_norm_backward(torch.ones(3, dtype=torch.float64), x, torch.ones(3, dtype=torch.float64))
        backward.gelu_backward(torch.ones(3), x.float())
        leaf = x.clone().requires_grad_()
        (leaf * leaf).sum()  # a graph built, never differentiated
    assert seen == set()
    # and, outside the watch, autograd leaves no trace that a later watch would see
    _backward_call(x)
    with probes.watching(WATCH) as seen:
        torch.sin(x)
    assert seen == set()


def test_the_sublayer_doubles_are_gradients_of_other_functions():
    """Each double is autograd's gradient of a function that is not the exercise's."""
    chapter = ASSIGNMENT.part("probes")
    gen = torch.Generator().manual_seed(0)
    x, w, g = (torch.randn(2, 3, 4, generator=gen, dtype=torch.float64) + 1,
               torch.randn(4, generator=gen, dtype=torch.float64), torch.randn(2, 3, 4, generator=gen, dtype=torch.float64))
    leaf, weight = x.clone().requires_grad_(), w.clone().requires_grad_()
    rms = leaf / torch.sqrt((leaf * leaf).mean(-1, keepdim=True) + EPS) * weight
    expected = torch.autograd.grad(rms, (leaf, weight), g)
    got = chapter.rms_norm_backward(g, x, w)
    assert torch.allclose(got[0], expected[0]) and torch.allclose(got[1], expected[1])
    assert not torch.allclose(got[0], load("backward").layer_norm_backward(g, x, w)[0])
    leaf = x.clone().requires_grad_()
    assert torch.allclose(chapter.silu_backward(g, x), torch.autograd.grad(torch.nn.functional.silu(leaf), leaf, g)[0])
    assert chapter.doubled_branch_residual_backward(g, lambda t: -t).equal(-g)

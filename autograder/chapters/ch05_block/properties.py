"""Checks that hold for any correct chapter-5 implementation, judged on the student's CPU
outputs: shift invariance and v/(v+eps) for LayerNorm, the symmetry identity of GELU, shapes
kept, the identity of zero branches, causality, each sub-module of the block called once, the
ledger against the registered count.

`check(exercise_id, outputs, cases, reference, judges)` returns (name, problem) pairs; a problem is a
(zh, en) pair or None.  The judges are the visible checks' own (hero_transformer/checks.py):
one check, two front ends.
"""

import torch


def check(exercise_id, out, cases, reference, judges):
    tensor = lambda *names: all(isinstance(out.get(n), torch.Tensor) for n in names)  # noqa: E731
    found = []
    if exercise_id == "layer_norm" and tensor("random", "shifted", "default_affine"):
        found.append(("shift invariance", judges.judge_shift_invariant(out["random"], out["shifted"])))
        found.append(("mean 0, variance v/(v+eps)",
                      judges.judge_normalised_stats(cases["default_affine"]["x"], out["default_affine"])))
    named = out.get("gradients")
    if isinstance(named, tuple) and all(
            isinstance(pair, tuple) and len(pair) == 2 and isinstance(pair[0], str) for pair in named):
        found.append(("gradients reach the input and every parameter", _gradients_reach(dict(named))))
    if exercise_id == "gelu" and tensor("symmetry"):
        a = cases["symmetry"]["x"][:1]
        found.append(("g(a) - g(-a) = a", judges.judge_gelu_symmetry(a, out["symmetry"][:1], out["symmetry"][1:])))
    if exercise_id == "feedforward" and tensor("random"):
        found.append(("shape [B,T,d] kept", judges.judge_same_shape(cases["random"]["x"], out["random"])))
    if exercise_id == "block":
        first = lambda name: out[name][0] if isinstance(out.get(name), tuple) else out.get(name)  # noqa: E731
        real, changed, zero = first("real"), first("changed_future"), first("zero_branches")
        x, wired = cases["real"]["x"], first("wiring")
        if isinstance(wired, torch.Tensor):  # the doubles accept any width, so a wrong shape shows here
            found.append(("shape [B,T,d] kept", judges.judge_same_shape(x, wired)))
        if isinstance(zero, torch.Tensor):
            found.append(("zero branches give the identity", judges.judge_identity(x, zero)))
        if isinstance(real, torch.Tensor) and isinstance(changed, torch.Tensor) and real.shape == changed.shape:
            found.append(("causal: the future does not change the past", judges.judge_causal(real, changed, 2)))
        if isinstance(out.get("calls"), dict):
            found.append(("each sub-module is called once", _calls_once(out["calls"])))
    if exercise_id == "parameter_count" and isinstance(out.get("chapter"), int):
        V, C, N, d, f = cases["chapter"]["args"]
        model = reference.TransformerLM(reference.Config(V, C, d, 4, N, f, 0.0))
        registered = sum(p.numel() for p in model.parameters())
        found.append(("ledger equals the registered count", judges.judge_ledger(out["chapter"], registered)))
    return found


def _calls_once(calls):
    """The first sub-module the block's forward did not call exactly once, as a problem."""
    for name in ("ln_attention", "attention", "ln_feedforward", "feedforward"):
        count = calls.get(name)
        if type(count) is int and count != 1:
            return (f"TransformerBlock.forward 必须恰好调用一次 self.{name}：U = X + Attn(LN1(X))，Y = U + FFN(LN2(U))，"
                    f"每个子层只出现一次（训练模式下，多调用一次注意力或 FFN 就会多抽一次 dropout）；你的代码调用了 {count} 次。",
                    f"TransformerBlock.forward must call self.{name} exactly once: U = X + Attn(LN1(X)), "
                    f"Y = U + FFN(LN2(U)), each sublayer appears once (in training mode every extra call of attention "
                    f"or the FFN draws its dropout again); yours called it {count} times.")
    return None


def _gradients_reach(gradients):
    """The inputs and parameters no gradient reached on the `gradients` case, as a problem: the
    output was cut from autograd's graph on the way from them, so training would never change them."""
    cut = [name for name, gradient in gradients.items() if gradient is None]
    if not cut:
        return None
    names = "、".join(cut)
    return (f"反向传播时没有梯度到达 {names}：你的输出在计算图里与它们断开了（.detach()、.data、.item() 或 .tolist() "
            "后再造张量、torch.no_grad()、在 Python 循环里逐个算，都会切断计算图），训练时它们就不会更新。用张量运算直接由它们"
            "算出输出。",
            f"no gradient reached {', '.join(cut)} in backpropagation: your output is cut off from them in autograd's "
            "graph (.detach(), .data, a tensor rebuilt from .item() or .tolist(), torch.no_grad(), a Python loop over "
            "the values all cut it), so training would never change them. Compute the output from them with tensor "
            "operations.")

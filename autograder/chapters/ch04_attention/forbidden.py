"""Correct results reached by a shortcut the chapter forbids: each must lose its exercise.

The chapter asks for the softmax and for attention written by hand (exercises.py, `forbids`).
These bodies compute the right values through the forbidden call, reached by several routes (a
direct call, a tensor method, getattr, torch.ops, log_softmax then exp), so the tests show the
grader sees the call whatever the route, and names it.  The attention shortcuts read the
weights out of scaled_dot_product_attention (with the identity as values), so that dropout on
the weights still acts where it should and the values stay right in training mode too.  While
`attention` is graded, the scores and the softmax are the probe's stand-ins (0.5·q·k, then a
softmax at temperature 2: softmax(0.25·q·k) in all), so the shortcuts call SDPA at scale 0.25:
their values match, and the forbidden call is the only thing that costs them the exercise.
Same conventions as faults.py and variants.py.
The bodies below the line reach the same value through torch's own internals (torch._refs,
torch._decomp, a tracer), each named in the feedback as the generic call registry.INTERNAL_ROUTES
(Entry.route), through another built-in the chapter's call now covers, or in a second thread
(Entry.raises: a task cannot start one, so the body loses by raising).
"""

import math  # noqa: F401  (used by the bodies)

import torch  # noqa: F401
import torch.nn.functional as F  # noqa: F401

from autograder.registry import catalogue

CATALOGUE, shortcut = catalogue("forbidden")


@shortcut("stable_softmax", "torch.nn.functional.softmax, called directly")
def functional_softmax(scores):
    return F.softmax(scores, dim=-1)


@shortcut("stable_softmax", "the tensor method, reached through getattr")
def method_softmax(scores):
    return getattr(scores, "soft" + "max")(-1)


@shortcut("stable_softmax", "log_softmax, then exp")
def log_softmax_exp(scores):
    return torch.log_softmax(scores, dim=-1).exp()


@shortcut("stable_softmax", "torch.ops.aten._softmax")
def aten_softmax(scores):
    return torch.ops.aten._softmax(scores, -1, False)


@shortcut("attention", "F.scaled_dot_product_attention with the identity as values gives the weights")
def sdpa_weights(self, x, past_key_value=None, use_cache=False):
    q, k, v = (self.split_heads(t) for t in self.qkv(x).split(x.shape[-1], dim=-1))
    if past_key_value is not None:
        k = torch.cat([past_key_value[0], k], dim=2)
        v = torch.cat([past_key_value[1], v], dim=2)
    total = k.shape[2]
    allowed = self.causal_mask[total - x.shape[1]:total, :total]
    eye = torch.eye(total, dtype=x.dtype, device=x.device).expand(*k.shape[:2], total, total)
    weights = self.attn_dropout(F.scaled_dot_product_attention(q, k, eye, attn_mask=allowed, scale=0.25))
    return self.proj(self.merge_heads(weights @ v)), ((k, v) if use_cache else None)


@shortcut("attention", "the same through getattr on torch.nn.functional, imported inside the method")
def sdpa_getattr(self, x, past_key_value=None, use_cache=False):
    import torch.nn.functional as functional

    attend = getattr(functional, "scaled_dot_product" + "_attention")
    q, k, v = (self.split_heads(t) for t in self.qkv(x).split(x.shape[-1], dim=-1))
    if past_key_value is not None:
        k = torch.cat([past_key_value[0], k], dim=2)
        v = torch.cat([past_key_value[1], v], dim=2)
    total = k.shape[2]
    allowed = self.causal_mask[total - x.shape[1]:total, :total]
    eye = torch.eye(total, dtype=x.dtype, device=x.device).expand(*k.shape[:2], total, total)
    weights = self.attn_dropout(attend(q, k, eye, attn_mask=allowed, scale=0.25))
    return self.proj(self.merge_heads(weights @ v)), ((k, v) if use_cache else None)


# --- the same values through torch's internals, other built-ins, or a second thread ----------------


@shortcut("stable_softmax", "torch._refs.softmax (torch's Python reference implementation)", route="torch._refs.softmax")
def refs_softmax(scores):
    return torch._refs.softmax(scores, -1)


@shortcut("stable_softmax", "torch._decomp's _softmax (torch's Python decomposition)",
          route="torch._decomp.decompositions._softmax")
def decomp_softmax(scores):
    return torch._decomp.decompositions._softmax(scores, -1, False)


@shortcut("stable_softmax", "torch._masked_softmax with nothing masked")
def masked_softmax(scores):
    return torch._masked_softmax(scores, torch.zeros_like(scores, dtype=torch.bool))


@shortcut("stable_softmax", "a shifted softmax written out, but run through torch.jit.trace (TorchScript is "
          "refused, not trusted: its operators run from C++)", route="torch.jit.ScriptFunction")
def traced_softmax(scores):
    def softmax(s):
        e = (s - s.amax(dim=-1, keepdim=True)).exp()
        return e / e.sum(dim=-1, keepdim=True)

    return torch.jit.trace(softmax, (scores,))(scores)


@shortcut("stable_softmax", "torch.softmax in a threading.Thread (the watch is per thread)",
          raises="can't start new thread")
def threaded_softmax(scores):
    import threading

    result = {}
    worker = threading.Thread(target=lambda: result.setdefault("weights", torch.softmax(scores, dim=-1)))
    worker.start()
    worker.join()
    return result["weights"]


@shortcut("attention", "torch._decomp's CPU flash-attention decomposition, which also returns the weights",
          route="torch._decomp.decompositions.scaled_dot_product_flash_attention_for_cpu")
def decomp_sdpa_weights(self, x, past_key_value=None, use_cache=False):
    q, k, v = (self.split_heads(t) for t in self.qkv(x).split(x.shape[-1], dim=-1))
    if past_key_value is not None:
        k = torch.cat([past_key_value[0], k], dim=2)
        v = torch.cat([past_key_value[1], v], dim=2)
    total = k.shape[2]
    allowed = self.causal_mask[total - x.shape[1]:total, :total]
    blocked = torch.zeros(allowed.shape, dtype=x.dtype, device=x.device).masked_fill(~allowed, float("-inf"))
    weights = torch._decomp.decompositions.scaled_dot_product_flash_attention_for_cpu(
        q, k, v, attn_mask=blocked, scale=0.25)[1]
    return self.proj(self.merge_heads(self.attn_dropout(weights) @ v)), ((k, v) if use_cache else None)


@shortcut("attention", "F.scaled_dot_product_attention on the math backend (sdpa_kernel(SDPBackend.MATH): a "
          "composite the dispatcher decomposes into bmm and softmax)")
def math_backend_sdpa_weights(self, x, past_key_value=None, use_cache=False):
    from torch.nn.attention import SDPBackend, sdpa_kernel

    q, k, v = (self.split_heads(t) for t in self.qkv(x).split(x.shape[-1], dim=-1))
    if past_key_value is not None:
        k = torch.cat([past_key_value[0], k], dim=2)
        v = torch.cat([past_key_value[1], v], dim=2)
    total = k.shape[2]
    allowed = self.causal_mask[total - x.shape[1]:total, :total]
    eye = torch.eye(total, dtype=x.dtype, device=x.device).expand(*k.shape[:2], total, total)
    with sdpa_kernel(SDPBackend.MATH):
        weights = F.scaled_dot_product_attention(q, k, eye, attn_mask=allowed, scale=0.25)
    return self.proj(self.merge_heads(self.attn_dropout(weights) @ v)), ((k, v) if use_cache else None)


@shortcut("attention", "F.multi_head_attention_forward, one head per batch row, gives the weights")
def multi_head_attention_weights(self, x, past_key_value=None, use_cache=False):
    q, k, v = (self.split_heads(t) for t in self.qkv(x).split(x.shape[-1], dim=-1))
    if past_key_value is not None:
        k = torch.cat([past_key_value[0], k], dim=2)
        v = torch.cat([past_key_value[1], v], dim=2)
    batch, heads, length, width = q.shape
    total = k.shape[2]
    allowed = self.causal_mask[total - length:total, :total]
    eye = torch.eye(width, dtype=x.dtype, device=x.device)

    def rows(t):  # [B, H, T, d_h] -> [T, B*H, d_h]: each head a batch row of a one-head attention
        return t.reshape(batch * heads, -1, width).transpose(0, 1)

    # multi_head_attention_forward scales q by 1/sqrt(d_h); the probe's scores and softmax make 0.25 in all
    _, weights = F.multi_head_attention_forward(
        rows(q) * (0.25 * math.sqrt(width)), rows(k), rows(k), width, 1, None, None, None, None, False, 0.0,
        eye, None, training=False, need_weights=True, attn_mask=~allowed, use_separate_proj_weight=True,
        q_proj_weight=eye, k_proj_weight=eye, v_proj_weight=eye, average_attn_weights=False)
    weights = self.attn_dropout(weights.reshape(batch, heads, length, total))
    return self.proj(self.merge_heads(weights @ v)), ((k, v) if use_cache else None)


# --- the watch switched off first: no hook of the grader's runs (reach.py reads the source) ----------


@shortcut("stable_softmax", "torch._C._VariableFunctions.softmax with both watches switched off: "
          "DisableTorchFunction and the Python dispatch keys excluded", unseen=True)
def switched_off_softmax(scores):
    python = torch._C.DispatchKeySet(torch._C.DispatchKey.Python) | torch._C.DispatchKeySet(
        torch._C.DispatchKey.PythonTLSSnapshot)
    with torch._C.DisableTorchFunction(), torch._C._ExcludeDispatchKeyGuard(python):
        return torch._C._VariableFunctions.softmax(scores, -1)

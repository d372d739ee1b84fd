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
"""

import torch  # noqa: F401  (used by the bodies)
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

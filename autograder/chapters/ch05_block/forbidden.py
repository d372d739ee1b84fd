"""Correct results reached by a shortcut the chapter forbids: each must lose its exercise.

The chapter asks for LayerNorm and GELU written by hand and for the parameter ledger as a
formula (exercises.py, `forbids`).  These bodies compute the right values through the
forbidden call, reached by several routes (a direct call, an alias imported inside the
function, getattr, torch.ops, a module built and called), so the tests show the grader sees the
call whatever the route, and names it.  `hero samples OUT` writes one sample per entry
(`forbidden_<id>`).  Same conventions as faults.py and variants.py.
"""

import torch  # noqa: F401  (used by the bodies)
import torch.nn.functional as F  # noqa: F401

from autograder.registry import catalogue

CATALOGUE, shortcut = catalogue("forbidden")


@shortcut("layer_norm", "torch.nn.functional.layer_norm, called directly")
def functional_layer_norm(self, x):
    return F.layer_norm(x, (x.shape[-1],), self.weight, self.bias, self.eps)


@shortcut("layer_norm", "nn.LayerNorm imported under another name inside the method")
def aliased_module_layer_norm(self, x):
    from torch.nn import LayerNorm as Normalise

    norm = Normalise(x.shape[-1], eps=self.eps).to(x.device)
    with torch.no_grad():
        norm.weight.copy_(self.weight)
        norm.bias.copy_(self.bias)
    return norm(x)


@shortcut("layer_norm", "getattr(torch, 'layer' + '_norm')")
def getattr_layer_norm(self, x):
    return getattr(torch, "layer" + "_norm")(x, (x.shape[-1],), self.weight, self.bias, self.eps)


@shortcut("layer_norm", "group_norm with one group per position, through torch.ops")
def group_norm_layer_norm(self, x):
    flat = x.reshape(-1, x.shape[-1], 1)
    out = torch.ops.aten.native_group_norm(flat, None, None, flat.shape[0], flat.shape[1], 1, 1, self.eps)[0]
    return out.reshape(x.shape) * self.weight + self.bias


@shortcut("gelu", "F.gelu(approximate='none')")
def functional_gelu(x):
    return F.gelu(x, approximate="none")


@shortcut("gelu", "an nn.GELU module built and called")
def module_gelu(x):
    return torch.nn.GELU()(x)


@shortcut("parameter_count", "builds the model and counts what it registers")
def counted_ledger(V, C, N, d, f):
    net = TransformerLM(Config(V, C, d, 1, N, f, 0.0))  # noqa: F821  (model.py's own classes)
    return sum(p.numel() for p in net.parameters())

"""Correct results reached by a shortcut the chapter forbids: each must lose its exercise.

The chapter asks for LayerNorm and GELU written by hand and for the parameter ledger as a
formula (exercises.py, `forbids`).  These bodies compute the right values through the
forbidden call, reached by several routes (a direct call, an alias imported inside the
function, getattr, torch.ops, a module built and called), so the tests show the grader sees the
call whatever the route, and names it.  `hero samples OUT` writes one sample per entry
(`forbidden_<id>`).  Same conventions as faults.py and variants.py.
The bodies below the line reach the same value through torch's own internals (torch._refs,
torch._decomp, a tracer), each named in the feedback as the generic call registry.INTERNAL_ROUTES
(Entry.route), through another built-in the chapter's call now covers, or in a second thread
or a forked process (Entry.raises: a task cannot start either, so the body loses by raising).
The last bodies run the forbidden call where torch sets the operator watch aside: as the kernel of
an operator of their own (torch.library), in a dispatch mode of their own, under a torch._C dispatch
guard or with the mode stack popped (Entry.route names each: docs/grading.md, "Every route to a
forbidden call").
"""

import math  # noqa: F401  (used by the bodies)

import torch  # noqa: F401
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


# --- the same values through torch's internals, other built-ins, a second thread or process --------


@shortcut("layer_norm", "torch._refs.native_layer_norm (torch's Python reference implementation)",
          route="torch._refs.native_layer_norm")
def refs_layer_norm(self, x):
    return torch._refs.native_layer_norm(x, (x.shape[-1],), self.weight, self.bias, self.eps)[0]


@shortcut("layer_norm", "torch._decomp's native_batch_norm with one channel per position (torch's Python "
          "decomposition)", route="torch._decomp.decompositions.native_batch_norm")
def decomp_batch_norm_layer_norm(self, x):
    rows = x.reshape(1, -1, x.shape[-1])
    out = torch._decomp.decompositions.native_batch_norm(rows, None, None, None, None, True, 0.0, self.eps)[0]
    return out.reshape(x.shape) * self.weight + self.bias


@shortcut("layer_norm", "torch.rms_norm of the centred input (a composite the dispatcher decomposes before the "
          "operator watch sees it)")
def rms_norm_of_centred(self, x):
    return torch.rms_norm(x - x.mean(dim=-1, keepdim=True), (x.shape[-1],), self.weight, self.eps) + self.bias


@shortcut("layer_norm", "F.layer_norm in a forked child process, the values sent back through a pipe",
          raises="PermissionError")
def forked_layer_norm(self, x):
    import os

    readable, writable = os.pipe()
    if os.fork() == 0:  # the child: whatever its watch records dies with it
        os.close(readable)
        y = F.layer_norm(x, (x.shape[-1],), self.weight, self.bias, self.eps).detach().cpu()
        os.write(writable, y.numpy().tobytes())
        os.kill(os.getpid(), 9)
    os.close(writable)
    data = b""
    while chunk := os.read(readable, 1 << 16):
        data += chunk
    os.close(readable)
    return torch.frombuffer(bytearray(data), dtype=x.dtype).reshape(x.shape).to(x.device)


@shortcut("gelu", "torch._refs.nn.functional.gelu (torch's Python reference implementation)",
          route="torch._refs.nn.functional.gelu")
def refs_gelu(x):
    return torch._refs.nn.functional.gelu(x)


@shortcut("gelu", "the in-place operator torch.ops.aten.gelu_ on a copy")
def inplace_gelu(x):
    return torch.ops.aten.gelu_(x.clone())


@shortcut("gelu", "the erf GELU written out, but traced by torch.fx (make_fx) and run as a graph (a tracer is "
          "refused, not trusted)", route="torch.fx.experimental.proxy_tensor._MakefxTracer.trace")
def fx_traced_gelu(x):
    from torch.fx.experimental.proxy_tensor import make_fx

    graph = make_fx(lambda t: 0.5 * t * (1.0 + torch.erf(t / math.sqrt(2.0))))(x)
    return graph(x)


@shortcut("gelu", "torch's GELU kernel fused after a product with the identity (_addmm_activation, use_gelu)")
def fused_addmm_gelu(x):
    flat = x.reshape(-1, x.shape[-1])
    eye = torch.eye(x.shape[-1], dtype=x.dtype, device=x.device)
    bias = torch.zeros(x.shape[-1], dtype=x.dtype, device=x.device)
    return torch._addmm_activation(bias, flat, eye, use_gelu=True).reshape(x.shape)


@shortcut("gelu", "oneDNN's fused linear with a \"gelu\" attribute (torch.ops.mkldnn._linear_pointwise)")
def onednn_linear_gelu(x):
    flat = x.reshape(-1, x.shape[-1])
    eye = torch.eye(x.shape[-1], dtype=x.dtype, device=x.device)
    return torch.ops.mkldnn._linear_pointwise(flat, eye, None, "gelu", [], "none").reshape(x.shape)


@shortcut("layer_norm", "F.layer_norm run from a tensor subclass's __torch_dispatch__ (the watch is set aside "
          "while a subclass handles an operator)", route="torch.Tensor.__torch_dispatch__")
def subclass_dispatch_layer_norm(self, x):
    class Box(torch.Tensor):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            return F.layer_norm(x, (x.shape[-1],), self.weight, self.bias, self.eps)

    return torch.add(Box._make_subclass(Box, torch.zeros(1)), 0)


@shortcut("gelu", "F.gelu in a threading.Thread (the watch is per thread)", raises="can't start new thread")
def threaded_gelu(x):
    import threading

    result = {}
    worker = threading.Thread(target=lambda: result.setdefault("y", F.gelu(x)))
    worker.start()
    worker.join()
    return result["y"]


# --- operators and dispatch modes of one's own: their Python code runs with the operator watch set aside -


@shortcut("layer_norm", "F.layer_norm as the kernel of an operator of one's own (torch.library.Library, DEF, "
          "CompositeExplicitAutograd)", route="torch.library")
def library_operator_layer_norm(self, x):
    if "_hero_norm_library" not in globals():  # defined once per process, as a module would at import
        library = torch.library.Library("hero_norm", "DEF")
        library.define("layer_norm(Tensor x, Tensor weight, Tensor bias, float eps) -> Tensor")
        library.impl("layer_norm", lambda x, weight, bias, eps: F.layer_norm(x, (x.shape[-1],), weight, bias, eps),
                     "CompositeExplicitAutograd")
        globals()["_hero_norm_library"] = library
    return torch.ops.hero_norm.layer_norm(x, self.weight, self.bias, self.eps)


@shortcut("gelu", "F.gelu inside a custom operator (torch.library.custom_op)", route="torch.library")
def custom_op_gelu(x):
    if "_hero_gelu_op" not in globals():
        def kernel(t: torch.Tensor) -> torch.Tensor:
            return F.gelu(t)
        globals()["_hero_gelu_op"] = torch.library.custom_op("hero_gelu::gelu", kernel, mutates_args=())
    return globals()["_hero_gelu_op"](x)


@shortcut("gelu", "torch's own sinh given F.gelu as its CPU kernel (an IMPL library on aten), then torch.sinh",
          route="torch.library")
def aten_kernel_replaced_gelu(x):
    if "_hero_aten_library" not in globals():
        library = torch.library.Library("aten", "IMPL")
        library.impl("sinh", lambda t: F.gelu(t), "CPU")
        globals()["_hero_aten_library"] = library
    return torch.sinh(x)


@shortcut("layer_norm", "torch's own sinh given F.layer_norm as its CPU kernel and a fallthrough on the Python "
          "key, so that no dispatch mode sees it at all", route="torch.library")
def aten_kernel_hidden_layer_norm(self, x):
    if "_hero_hidden_library" not in globals():
        library = torch.library.Library("aten", "IMPL")
        library.impl("sinh", torch.library.fallthrough_kernel, "Python")
        library.impl("sinh", lambda t: F.layer_norm(t, (t.shape[-1],), None, None, globals()["_hero_eps"]), "CPU")
        globals()["_hero_hidden_library"] = library
    globals()["_hero_eps"] = self.eps
    return torch.sinh(x) * self.weight + self.bias


@shortcut("gelu", "F.gelu in the handler of a TorchDispatchMode of one's own, entered around torch.sin",
          route="torch.utils._python_dispatch.TorchDispatchMode")
def own_dispatch_mode_gelu(x):
    from torch.utils._python_dispatch import TorchDispatchMode

    class Answer(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if func is torch.ops.aten.sin.default:
                return F.gelu(args[0])
            return func(*args, **(kwargs or {}))

    with Answer():
        return torch.sin(x)


@shortcut("gelu", "F.gelu under torch._C._DisableTorchDispatch (a dispatch guard that sets every dispatch mode "
          "aside)", route="torch._C")
def guarded_gelu(x):
    with torch._C._DisableTorchDispatch():
        return F.gelu(x)


@shortcut("layer_norm", "aten.native_layer_norm redispatched straight to its CPU kernel, below the dispatch "
          "modes (OpOverload.redispatch)", route="torch._C")
def redispatched_layer_norm(self, x):
    below = torch._C.DispatchKeySet(torch._C.DispatchKey.CPU)
    return torch.ops.aten.native_layer_norm.default.redispatch(
        below, x, [x.shape[-1]], self.weight, self.bias, self.eps)[0]


# --- the watch switched off first: no hook of the grader's runs (reach.py reads the source) ----------


@shortcut("gelu", "torch._C._nn.gelu (the binding F.gelu calls) with both watches switched off: "
          "DisableTorchFunction and the Python dispatch keys excluded", unseen=True)
def switched_off_gelu(x):
    python = torch._C.DispatchKeySet(torch._C.DispatchKey.Python) | torch._C.DispatchKeySet(
        torch._C.DispatchKey.PythonTLSSnapshot)
    with torch._C.DisableTorchFunction(), torch._C._ExcludeDispatchKeyGuard(python):
        return torch._C._nn.gelu(x)


@shortcut("layer_norm", "native_layer_norm through torch._C._VariableFunctions, both watches switched off "
          "(torch's public alias torch.DisableTorchFunction, the C module imported under another name)", unseen=True)
def switched_off_layer_norm(self, x):
    from torch import _C as engine_room

    python = engine_room.DispatchKeySet(engine_room.DispatchKey.Python) | engine_room.DispatchKeySet(
        engine_room.DispatchKey.PythonTLSSnapshot)
    with torch.DisableTorchFunction(), engine_room._ExcludeDispatchKeyGuard(python):
        return engine_room._VariableFunctions.native_layer_norm(x, [x.shape[-1]], self.weight, self.bias, self.eps)[0]

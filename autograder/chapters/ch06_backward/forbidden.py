"""Correct results reached by a shortcut the chapter forbids: each must lose its exercise.

Chapter 6 asks for every backward written by hand (exercises.py, `forbids`): no automatic
differentiation and no built-in backward kernel.  These bodies compute the right values through
autograd by several routes (Tensor.backward, torch.autograd.grad, torch.autograd.functional,
torch.func's vjp, forward mode through torch.func.jvp) or call a backward kernel through
torch.ops, so the tests show the grader sees the shortcut whatever the route, and names it.
The probes run under torch.no_grad(), so the bodies that build a graph switch grad mode on, as a
student's would have to.  `hero samples OUT` writes one sample per entry (`forbidden_<id>`).
Same conventions as faults.py and variants.py.
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

from autograder.registry import catalogue

CATALOGUE, shortcut = catalogue("forbidden")

EPS = 1e-5  # backward.py's name, for the default arguments below


@shortcut("layer_norm_backward", "torch.autograd.grad through torch.nn.functional.layer_norm")
def autograd_layer_norm_backward(grad_out, x, weight, eps=EPS):
    with torch.enable_grad():
        x = x.detach().clone().requires_grad_()
        weight = weight.detach().clone().requires_grad_()
        bias = torch.zeros_like(weight, requires_grad=True)
        y = torch.nn.functional.layer_norm(x, (x.shape[-1],), weight, bias, eps)
        return torch.autograd.grad(y, (x, weight, bias), grad_out)


@shortcut("layer_norm_backward", "the aten kernel native_layer_norm_backward through torch.ops, no autograd")
def kernel_layer_norm_backward(grad_out, x, weight, eps=EPS):
    width = x.shape[-1]
    flat = x.reshape(-1, width)
    mean = flat.mean(dim=-1, keepdim=True)
    rstd = torch.rsqrt((flat - mean).pow(2).mean(dim=-1, keepdim=True) + eps)
    grad_x, grad_weight, grad_bias = torch.ops.aten.native_layer_norm_backward(
        grad_out.reshape(-1, width), flat, [width], mean, rstd, weight, torch.zeros_like(weight), [True, True, True])
    return grad_x.reshape(x.shape), grad_weight, grad_bias


@shortcut("gelu_backward", "Tensor.backward() on a hand-written erf GELU (no forbidden kernel, autograd alone)")
def backward_call_gelu_backward(grad_out, x):
    with torch.enable_grad():
        leaf = x.detach().clone().requires_grad_()
        (0.5 * leaf * (1.0 + torch.erf(leaf / math.sqrt(2.0)))).backward(grad_out)
    return leaf.grad


@shortcut("gelu_backward", "getattr(torch.ops.aten, 'gelu' + '_backward')")
def kernel_gelu_backward(grad_out, x):
    return getattr(torch.ops.aten, "gelu" + "_backward")(grad_out, x)


@shortcut("linear_backward", "torch.func.vjp of the affine map")
def func_vjp_linear_backward(grad_out, x, weight):
    bias = torch.zeros(weight.shape[0], dtype=weight.dtype, device=weight.device)
    _, pullback = torch.func.vjp(lambda x_, w_, b_: x_ @ w_.transpose(0, 1) + b_, x, weight, bias)
    return pullback(grad_out)


@shortcut("linear_backward", "torch.autograd.functional.vjp, imported under another name")
def functional_vjp_linear_backward(grad_out, x, weight):
    from torch.autograd.functional import vjp as pull_back

    bias = torch.zeros(weight.shape[0], dtype=weight.dtype, device=weight.device)
    _, grads = pull_back(lambda x_, w_, b_: x_ @ w_.transpose(0, 1) + b_, (x, weight, bias), grad_out)
    return grads


@shortcut("residual_backward", "forward mode: torch.func.jvp of the linear map v -> v + branch_backward(v)")
def jvp_residual_backward(grad_out, branch_backward):
    _, tangent = torch.func.jvp(lambda v: v + branch_backward(v), (grad_out,), (grad_out,))
    return tangent


@shortcut("feedforward_sublayer_backward", "the pieces called by name, but the upstream gradient passed through "
          "torch.autograd.grad of <v, grad_out> first")
def autograd_copy_sublayer_backward(grad_out, u, ln, ffn):
    with torch.enable_grad():
        probe = torch.zeros_like(grad_out, requires_grad=True)
        (grad_copy,) = torch.autograd.grad((probe * grad_out).sum(), probe)
    gamma, beta = ln.weight.detach(), ln.bias.detach()
    w1, b1, w2 = ffn.fc1.weight.detach(), ffn.fc1.bias.detach(), ffn.fc2.weight.detach()
    centered = u - u.mean(dim=-1, keepdim=True)
    z = centered / torch.sqrt((centered * centered).mean(dim=-1, keepdim=True) + ln.eps) * gamma + beta
    h = z @ w1.transpose(0, 1) + b1
    a = 0.5 * h * (1.0 + torch.erf(h / math.sqrt(2.0)))
    grads = {}

    def branch_backward(grad_y):
        grad_a, grads["fc2.weight"], grads["fc2.bias"] = linear_backward(grad_y, a, w2)  # noqa: F821
        grad_z, grads["fc1.weight"], grads["fc1.bias"] = linear_backward(gelu_backward(grad_a, h), z, w1)  # noqa: F821
        grad_branch, grads["ln.weight"], grads["ln.bias"] = layer_norm_backward(grad_z, u, gamma, ln.eps)  # noqa: F821
        return grad_branch

    return residual_backward(grad_copy, branch_backward), grads  # noqa: F821


# --- the same values through torch's internals, other built-ins, a second thread or process --------


@shortcut("layer_norm_backward", "torch._decomp's native_layer_norm_backward (torch's Python decomposition), no "
          "autograd", route="torch._decomp.decompositions.native_layer_norm_backward")
def decomp_layer_norm_backward(grad_out, x, weight, eps=EPS):
    width = x.shape[-1]
    flat = x.reshape(-1, width)
    mean = flat.mean(dim=-1, keepdim=True)
    rstd = torch.rsqrt((flat - mean).pow(2).mean(dim=-1, keepdim=True) + eps)
    grad_x, grad_weight, grad_bias = torch._decomp.decompositions.native_layer_norm_backward(
        grad_out.reshape(-1, width), flat, [width], mean, rstd, weight, torch.zeros_like(weight), [True, True, True])
    return grad_x.reshape(x.shape), grad_weight, grad_bias


@shortcut("layer_norm_backward", "torch.autograd.grad through F.layer_norm, in a threading.Thread (the watch is "
          "per thread)", raises="can't start new thread")
def threaded_autograd_layer_norm_backward(grad_out, x, weight, eps=EPS):
    import threading

    result = {}

    def work():
        with torch.enable_grad():
            leaf = x.detach().clone().requires_grad_()
            gamma = weight.detach().clone().requires_grad_()
            beta = torch.zeros_like(weight, requires_grad=True)
            y = torch.nn.functional.layer_norm(leaf, (x.shape[-1],), gamma, beta, eps)
            result["grads"] = torch.autograd.grad(y, (leaf, gamma, beta), grad_out)

    worker = threading.Thread(target=work)
    worker.start()
    worker.join()
    return result["grads"]


@shortcut("gelu_backward", "torch._decomp's gelu_backward (torch's Python decomposition)",
          route="torch._decomp.decompositions.gelu_backward")
def decomp_gelu_backward(grad_out, x):
    return torch._decomp.decompositions.gelu_backward(grad_out, x)


@shortcut("gelu_backward", "torch.ops.aten.infinitely_differentiable_gelu_backward (a composite the dispatcher "
          "decomposes before the operator watch sees it)")
def composite_gelu_backward(grad_out, x):
    return torch.ops.aten.infinitely_differentiable_gelu_backward(grad_out, x)


@shortcut("gelu_backward", "torch.func.jacrev of the erf GELU: the diagonal of its Jacobian")
def jacrev_gelu_backward(grad_out, x):
    flat = x.reshape(-1)
    jacobian = torch.func.jacrev(lambda t: 0.5 * t * (1.0 + torch.erf(t / math.sqrt(2.0))))(flat)
    return (torch.diagonal(jacobian) * grad_out.reshape(-1)).reshape(x.shape)


@shortcut("gelu_backward", "Tensor.backward() in a forked child process, the gradient sent back through a pipe",
          raises="PermissionError")
def forked_autograd_gelu_backward(grad_out, x):
    import os

    readable, writable = os.pipe()
    if os.fork() == 0:  # the child: whatever its watch records dies with it
        os.close(readable)
        with torch.enable_grad():
            leaf = x.detach().clone().requires_grad_()
            torch.nn.functional.gelu(leaf).backward(grad_out)
        os.write(writable, leaf.grad.detach().cpu().numpy().tobytes())
        os.kill(os.getpid(), 9)
    os.close(writable)
    data = b""
    while chunk := os.read(readable, 1 << 16):
        data += chunk
    os.close(readable)
    return torch.frombuffer(bytearray(data), dtype=x.dtype).reshape(x.shape).to(x.device)


# --- operators of one's own: their Python kernels run with the operator watch set aside ----------------


@shortcut("layer_norm_backward", "the aten kernel native_layer_norm_backward inside an operator of one's own "
          "(torch.library.Library, DEF, CPU kernel)", route="torch.library")
def library_operator_layer_norm_backward(grad_out, x, weight, eps=EPS):
    if "_hero_backward_library" not in globals():  # defined once per process, as a module would at import
        def kernel(grad_out, x, weight, eps):
            width = x.shape[-1]
            flat = x.reshape(-1, width)
            mean = flat.mean(dim=-1, keepdim=True)
            rstd = torch.rsqrt((flat - mean).pow(2).mean(dim=-1, keepdim=True) + eps)
            grads = torch.ops.aten.native_layer_norm_backward(
                grad_out.reshape(-1, width), flat, [width], mean, rstd, weight, torch.zeros_like(weight),
                [True, True, True])
            return grads[0].reshape(x.shape), grads[1], grads[2]
        library = torch.library.Library("hero_backward", "DEF")
        library.define("layer_norm_backward(Tensor g, Tensor x, Tensor w, float eps) -> (Tensor, Tensor, Tensor)")
        library.impl("layer_norm_backward", kernel, "CPU")
        globals()["_hero_backward_library"] = library
    return torch.ops.hero_backward.layer_norm_backward(grad_out, x, weight, eps)


@shortcut("gelu_backward", "the aten kernel gelu_backward as the kernel of an operator of one's own "
          "(torch.library.define and register_kernel)", route="torch.library")
def registered_kernel_gelu_backward(grad_out, x):
    if "_hero_gelu_backward_op" not in globals():
        torch.library.define("hero_gelu_backward::gelu_backward", "(Tensor g, Tensor x) -> Tensor")
        torch.library.register_kernel("hero_gelu_backward::gelu_backward", "cpu",
                                      lambda g, t: torch.ops.aten.gelu_backward(g, t))
        globals()["_hero_gelu_backward_op"] = True
    return torch.ops.hero_gelu_backward.gelu_backward(grad_out, x)


# --- the same kernels called where the operator watch is set aside: torch._C's dispatch guards, the mode stack -


@shortcut("gelu_backward", "the aten kernel gelu_backward called with the dispatch mode popped off its stack "
          "(torch._C._pop_torch_dispatch_stack) and pushed back", route="torch._C")
def popped_mode_gelu_backward(grad_out, x):
    mode = torch._C._pop_torch_dispatch_stack(None)
    try:
        return torch.ops.aten.gelu_backward(grad_out, x)
    finally:
        torch._C._push_on_torch_dispatch_stack(mode)


@shortcut("layer_norm_backward", "the aten kernel native_layer_norm_backward under torch._C._ExcludeDispatchKeyGuard "
          "of the Python key (where dispatch modes are dispatched from)", route="torch._C")
def excluded_key_layer_norm_backward(grad_out, x, weight, eps=EPS):
    width = x.shape[-1]
    flat = x.reshape(-1, width)
    mean = flat.mean(dim=-1, keepdim=True)
    rstd = torch.rsqrt((flat - mean).pow(2).mean(dim=-1, keepdim=True) + eps)
    with torch._C._ExcludeDispatchKeyGuard(torch._C.DispatchKeySet(torch._C.DispatchKey.Python)):
        grads = torch.ops.aten.native_layer_norm_backward(
            grad_out.reshape(-1, width), flat, [width], mean, rstd, weight, torch.zeros_like(weight), [True, True, True])
    return grads[0].reshape(x.shape), grads[1], grads[2]


# --- the watch switched off first: no hook of the grader's runs (reach.py reads the source) ----------


@shortcut("layer_norm_backward", "torch.autograd.grad through F.layer_norm with both watches switched off: "
          "DisableTorchFunction and the Python dispatch keys excluded", unseen=True)
def switched_off_layer_norm_backward(grad_out, x, weight, eps=EPS):
    python = torch._C.DispatchKeySet(torch._C.DispatchKey.Python) | torch._C.DispatchKeySet(
        torch._C.DispatchKey.PythonTLSSnapshot)
    with torch._C.DisableTorchFunction(), torch._C._ExcludeDispatchKeyGuard(python), torch.enable_grad():
        x = x.detach().clone().requires_grad_()
        weight = weight.detach().clone().requires_grad_()
        bias = torch.zeros_like(weight, requires_grad=True)
        y = torch.nn.functional.layer_norm(x, (x.shape[-1],), weight, bias, eps)
        return torch.autograd.grad(y, (x, weight, bias), grad_out)

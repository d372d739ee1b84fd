"""Correct chapter-6 exercise bodies written differently from the reference.

Every one must get full marks: they pin the tolerance policy and the probes to what the
exercise asks, not to how the reference happens to compute it.  `hero samples OUT` writes one
sample per variant (`correct_<id>`) and the tests grade each of them, also with every other
exercise of the chapter stubbed or faulty.  Same conventions as faults.py.
"""

import math  # noqa: F401  (used by variant bodies)

import torch  # noqa: F401

from autograder.registry import catalogue

CATALOGUE, variant = catalogue("correct")

EPS = 1e-5  # backward.py's name, for the default arguments below


@variant("layer_norm_backward", "the explicit Jacobian (delta_ij - 1/d - xhat_i xhat_j / d) / sigma, applied with einsum")
def jacobian_layer_norm_backward(grad_out, x, weight, eps=EPS):
    width = x.shape[-1]
    centered = x - x.mean(dim=-1, keepdim=True)
    sigma = torch.sqrt(centered.pow(2).mean(dim=-1, keepdim=True) + eps)
    xhat = centered / sigma
    eye = torch.eye(width, dtype=x.dtype, device=x.device)
    jacobian = (eye - 1.0 / width - xhat.unsqueeze(-1) * xhat.unsqueeze(-2) / width) / sigma.unsqueeze(-1)
    grad_x = torch.einsum("...i,...ij->...j", grad_out * weight, jacobian)
    grad_weight = torch.einsum("...i->i", grad_out * xhat) if x.dim() > 1 else grad_out * xhat
    grad_bias = torch.einsum("...i->i", grad_out) if x.dim() > 1 else grad_out.clone()
    return grad_x, grad_weight, grad_bias


@variant("layer_norm_backward", "staged: back through xhat, then the variance, then the mean (the computational graph's order)")
def staged_layer_norm_backward(grad_out, x, weight, eps=EPS):
    width = x.shape[-1]
    mean = x.mean(dim=-1, keepdim=True)
    centered = x - mean
    variance = centered.pow(2).mean(dim=-1, keepdim=True)
    inverse = 1.0 / torch.sqrt(variance + eps)
    grad_xhat = grad_out * weight
    grad_variance = (grad_xhat * centered).sum(dim=-1, keepdim=True) * -0.5 * inverse ** 3
    grad_centered = grad_xhat * inverse + grad_variance * 2.0 * centered / width
    grad_x = grad_centered - grad_centered.mean(dim=-1, keepdim=True)
    leading = list(range(x.dim() - 1))
    xhat = centered * inverse
    if leading:
        return grad_x, (grad_out * xhat).sum(dim=leading), grad_out.sum(dim=leading)
    return grad_x, grad_out * xhat, grad_out.clone()


@variant("gelu_backward", "torch.special.ndtr for Phi, the density from exp, written as one expression")
def ndtr_gelu_backward(grad_out, x):
    return grad_out * (torch.special.ndtr(x) + x * torch.exp(-x.square() / 2) / math.sqrt(2 * math.pi))


@variant("gelu_backward", "erfc form of Phi, computed in float64 and cast back")
def erfc_gelu_backward(grad_out, x):
    wide = x.double()
    slope = 0.5 * torch.erfc(-wide / math.sqrt(2.0)) + wide * torch.exp(-0.5 * wide * wide) / math.sqrt(2.0 * math.pi)
    return (grad_out.double() * slope).to(grad_out.dtype)


@variant("linear_backward", "einsum over the leading axes")
def einsum_linear_backward(grad_out, x, weight):
    grad_x = torch.einsum("...o,oi->...i", grad_out, weight)
    grad_weight = torch.einsum("...o,...i->oi", grad_out, x)
    grad_bias = torch.einsum("...o->o", grad_out)
    return grad_x, grad_weight, grad_bias


@variant("linear_backward", "a sum of outer products, one per position")
def outer_product_linear_backward(grad_out, x, weight):
    rows_grad = grad_out.reshape(-1, weight.shape[0])
    rows_x = x.reshape(-1, weight.shape[1])
    grad_weight = torch.zeros_like(weight)
    for g, v in zip(rows_grad, rows_x):
        grad_weight = grad_weight + torch.outer(g, v)
    return torch.matmul(grad_out, weight), grad_weight, rows_grad.sum(dim=0)


@variant("residual_backward", "the branch first, then torch.add")
def branch_first_residual_backward(grad_out, branch_backward):
    through_branch = branch_backward(grad_out)
    return torch.add(through_branch, grad_out)


@variant("feedforward_sublayer_backward", "forward through torch.nn.functional, rsqrt and erfc; the branch's "
         "backward steps written in a row in a closure that keeps its gradients in a list")
def unrolled_sublayer_backward(grad_out, u, ln, ffn):
    functional = torch.nn.functional
    weights = {name: p.detach() for name, p in (("gamma", ln.weight), ("beta", ln.bias), ("w1", ffn.fc1.weight),
                                                 ("b1", ffn.fc1.bias), ("w2", ffn.fc2.weight))}
    mu = u.mean(-1, keepdim=True)
    var = (u - mu).pow(2).mean(-1, keepdim=True)
    z = (u - mu) * torch.rsqrt(var + ln.eps) * weights["gamma"] + weights["beta"]
    h = functional.linear(z, weights["w1"], weights["b1"])
    a = h * 0.5 * torch.erfc(-h / math.sqrt(2.0))
    found = []

    def through_branch(upstream):
        grad_a, grad_w2, grad_b2 = linear_backward(upstream, a, weights["w2"])  # noqa: F821
        grad_z, grad_w1, grad_b1 = linear_backward(gelu_backward(grad_a, h), z, weights["w1"])  # noqa: F821
        back, grad_gamma, grad_beta = layer_norm_backward(grad_z, u, weights["gamma"], eps=ln.eps)  # noqa: F821
        found[:] = [grad_w2, grad_b2, grad_w1, grad_b1, grad_gamma, grad_beta]
        return back

    grad_u = residual_backward(grad_out, through_branch)  # noqa: F821
    grads = dict(zip(("fc2.weight", "fc2.bias", "fc1.weight", "fc1.bias", "ln.weight", "ln.bias"), found))
    return grad_u, grads

"""Chapter 6: gradients by hand, pushed back through the chapter-5 graph.

Every function here is a backward pass written out: it receives the upstream gradient
``grad_out`` = dL/dy of some scalar loss L (the same shape as the forward's output y) and the
forward's inputs, and returns dL/d(input) and dL/d(parameter) -- a vector-Jacobian product,
never a Jacobian.  Nothing here may call automatic differentiation (``Tensor.backward``,
``torch.autograd.grad``, ``torch.func``) or a built-in backward kernel
(``native_layer_norm_backward``, ``gelu_backward``...): the grader watches for both.

The conventions are chapter 5's, unchanged: LayerNorm over the last axis with the population
variance and eps inside the square root, exact (erf) GELU, ``nn.Linear`` storage
``weight [out, in]`` with y = x W^T + b, and the pre-LN sublayer Y = U + FFN(LN2(U)).
Gradients keep the dtype and device of their inputs.
"""

import math

import torch

from .model import EPS


def layer_norm_backward(grad_out, x, weight, eps=EPS):
    """Backward of y = (x - mean) / sqrt(var + eps) * weight + bias over the last axis.

    grad_out, x: [..., d]; weight (gamma): [d].  Returns ``(grad_x, grad_weight, grad_bias)``:
    grad_x [..., d]; grad_weight and grad_bias [d], summed over every leading axis (all
    positions of all batches share gamma and beta).  With sigma = sqrt(var + eps) (population
    variance), xhat = (x - mean) / sigma and g the upstream gradient times gamma, the three-term
    form is

        grad_x = (g - mean(g) - xhat * mean(g * xhat)) / sigma      (means over the last axis)

    the direct path, the path through the mean, the path through the variance.
    grad_weight = sum of grad_out * xhat, grad_bias = sum of grad_out.
    """
    centered = x - x.mean(dim=-1, keepdim=True)
    sigma = torch.sqrt((centered * centered).mean(dim=-1, keepdim=True) + eps)
    xhat = centered / sigma
    g = grad_out * weight
    grad_x = (g - g.mean(dim=-1, keepdim=True) - xhat * (g * xhat).mean(dim=-1, keepdim=True)) / sigma
    width = x.shape[-1]
    grad_weight = (grad_out * xhat).reshape(-1, width).sum(dim=0)
    grad_bias = grad_out.reshape(-1, width).sum(dim=0)
    return grad_x, grad_weight, grad_bias


def gelu_backward(grad_out, x):
    """Backward of the exact GELU g(x) = x * Phi(x): returns grad_out * g'(x), where
    g'(x) = Phi(x) + x * phi(x), Phi the standard normal CDF (through erf) and
    phi(x) = exp(-x^2 / 2) / sqrt(2 pi) its density.  Same shape as x."""
    cdf = 0.5 * (1.0 + torch.erf(x / math.sqrt(2.0)))
    density = torch.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)
    return grad_out * (cdf + x * density)


def linear_backward(grad_out, x, weight):
    """Backward of y = x W^T + b in nn.Linear's storage convention.

    x: [..., in]; weight: [out, in]; grad_out: [..., out].  Returns ``(grad_x, grad_weight,
    grad_bias)``: grad_x = grad_out W ([..., in]); grad_weight = grad_out^T x summed over every
    leading axis ([out, in], the weight's own shape); grad_bias = grad_out summed over every
    leading axis ([out]).  The bias's value is not needed: y depends on it additively.  None of
    the arguments is changed; for a single position (no leading axis) grad_bias may be grad_out
    itself or a view of it, as autograd hands an identity path's gradient on."""
    grad_x = grad_out @ weight
    flat_grad = grad_out.reshape(-1, grad_out.shape[-1])
    flat_x = x.reshape(-1, x.shape[-1])
    return grad_x, flat_grad.transpose(0, 1) @ flat_x, flat_grad.sum(dim=0)


def residual_backward(grad_out, branch_backward):
    """Backward of y = x + R(x).  ``branch_backward`` maps an upstream gradient of R's output
    to the gradient with respect to x (R's own backward).  The Jacobian of y is I + J_R, so
    the result is grad_out (the identity path) plus branch_backward(grad_out) (the branch),
    added -- not one or the other.  Call branch_backward exactly once, and leave grad_out and
    what branch_backward returns unchanged (add them into a new tensor)."""
    return grad_out + branch_backward(grad_out)


def feedforward_sublayer_backward(grad_out, u, ln, ffn):
    """Backward of the pre-LN feed-forward sublayer Y = U + FFN(LN2(U)).

    grad_out, u: [..., d]; ``ln`` a model.LayerNorm (weight, bias, eps); ``ffn`` a
    model.FeedForward (fc1, exact GELU, fc2; dropout 0).  Recompute the forward pieces the
    backward needs with torch ops (z = LN2(u), h = fc1(z), a = GELU(h)), then push the gradient
    back by calling this module's functions by name: linear_backward (fc2), gelu_backward,
    linear_backward (fc1), layer_norm_backward (at u, LN2's input), all inside the
    branch_backward handed to residual_backward.

    Returns ``(grad_u, grads)``; grads is a dict with exactly the keys "ln.weight", "ln.bias",
    "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias", each the shape of its parameter.
    """
    gamma, beta = ln.weight.detach(), ln.bias.detach()
    w1, b1, w2 = ffn.fc1.weight.detach(), ffn.fc1.bias.detach(), ffn.fc2.weight.detach()
    centered = u - u.mean(dim=-1, keepdim=True)
    z = centered / torch.sqrt((centered * centered).mean(dim=-1, keepdim=True) + ln.eps) * gamma + beta
    h = z @ w1.transpose(0, 1) + b1
    a = 0.5 * h * (1.0 + torch.erf(h / math.sqrt(2.0)))
    grads = {}

    def branch_backward(grad_y):
        grad_a, grads["fc2.weight"], grads["fc2.bias"] = linear_backward(grad_y, a, w2)
        grad_h = gelu_backward(grad_a, h)
        grad_z, grads["fc1.weight"], grads["fc1.bias"] = linear_backward(grad_h, z, w1)
        grad_branch, grads["ln.weight"], grads["ln.bias"] = layer_norm_backward(grad_z, u, gamma, ln.eps)
        return grad_branch

    grad_u = residual_backward(grad_out, branch_backward)
    return grad_u, grads

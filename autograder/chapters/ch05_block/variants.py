"""Correct chapter-5 exercise bodies written differently from the reference.

Every one must get full marks: they pin the tolerance policy and the probes
to what the exercise asks, not to how the reference happens to compute it.
`hero samples OUT` writes one sample per variant (`correct_<id>`)
and the tests grade each of them.  Same conventions as faults.py.
"""

import math  # noqa: F401  (used by variant bodies)

import torch  # noqa: F401
import torch.nn.functional as F  # noqa: F401

from autograder.registry import catalogue

CATALOGUE, variant = catalogue("correct")


@variant("layer_norm", "var(unbiased=False)")
def var_population(self, x):
    mean = x.mean(-1, keepdim=True)
    return (x - mean) / torch.sqrt(x.var(-1, keepdim=True, unbiased=False) + self.eps) * self.weight + self.bias


@variant("layer_norm", "rsqrt and addcmul")
def rsqrt_form(self, x):
    centered = x - x.mean(-1, keepdim=True)
    scale = torch.rsqrt(centered.pow(2).mean(-1, keepdim=True) + self.eps)
    return torch.addcmul(self.bias, centered * scale, self.weight)


@variant("layer_norm", "computed in float64, cast back to the input dtype")
def float64_inside(self, x):
    wide = x.double()
    centered = wide - wide.mean(-1, keepdim=True)
    normalised = centered / (centered.square().mean(-1, keepdim=True) + self.eps).sqrt()
    return (normalised * self.weight.double() + self.bias.double()).to(x.dtype)


@variant("gelu", "x times the normal CDF, torch.special.ndtr")
def ndtr_gelu(x):
    return x * torch.special.ndtr(x)


@variant("gelu", "erfc formula")
def erfc_gelu(x):
    return 0.5 * x * torch.erfc(-x / math.sqrt(2.0))


@variant("feedforward", "einsum with the stored [out, in] weights")
def einsum_ffn(self, x):
    hidden = torch.einsum("...d,fd->...f", x, self.fc1.weight) + self.fc1.bias
    out = torch.einsum("...f,df->...d", self.activation(hidden), self.fc2.weight) + self.fc2.bias
    return self.dropout(out)


@variant("feedforward", "F.linear with the layers' parameters")
def functional_linear_ffn(self, x):
    hidden = self.activation(F.linear(x, self.fc1.weight, self.fc1.bias))
    return self.dropout(F.linear(hidden, self.fc2.weight, self.fc2.bias))


@variant("block", "seed 000's own answer, in its structure: the call to attention split over lines")
def seed_block(self, hidden, past_key_value=None, use_cache=False):
    attended, present = self.attention(
        self.ln_attention(hidden), past_key_value, use_cache
    )
    hidden = hidden + attended
    hidden = hidden + self.feedforward(self.ln_feedforward(hidden))
    return hidden, present


@variant("block", "named U and Y, tuple unpacking afterwards")
def named_block(self, hidden, past_key_value=None, use_cache=False):
    attention_out = self.attention(self.ln_attention(hidden), past_key_value, use_cache)
    u = torch.add(hidden, attention_out[0])
    y = torch.add(u, self.feedforward(self.ln_feedforward(u)))
    return (y, attention_out[1])


@variant("parameter_count", "factored expression")
def factored_ledger(V, C, N, d, f):
    return d * (2 * V + C + 2) + N * (4 * d * d + 2 * d * f + f + 5 * d)


@variant("parameter_count", "a sum over a table of parts")
def table_ledger(V, C, N, d, f):
    block = {"qkvo": 4 * d * d, "ffn weights": 2 * d * f, "ffn biases": f + d, "norms": 2 * 2 * d}
    model = {"embedding": V * d, "head": V * d, "positions": C * d, "final norm": 2 * d}
    return sum(model.values()) + N * sum(block.values())


"""Block variants for the labs, kept out of the frozen model.

`model.TransformerLM` stays exactly seed 000's model.  The labs (seeds 003 and 004) change one
thing at a time, so `LabLM(cfg, Variant(...))` rebuilds the same model from the same parts
(model.py's LayerNorm, FeedForward and attention parameters) with switches:

| field          | default (= the frozen model) | other settings                                    |
|----------------|------------------------------|---------------------------------------------------|
| placement      | "pre"                        | "post": LN after each residual sum (seed 004)     |
| norm           | "layer"                      | "rms": RMSNorm, statistics in float32; "none": no norm anywhere |
| norm_axis      | "feature"                    | "time": the wrong axis (failure-mode catalogue)   |
| eps            | 1e-5                         | any (ε too large)                                 |
| residual       | True                         | False: each sublayer replaces the stream          |
| attention_bias | False                        | True: biases on the Q/K/V and output projections  |
| ffn_bias       | True                         | False: no biases in the FFN                       |
| final_norm     | "before_head"                | "none", "twice" (an extra LN), "after_head"       |
| activation     | "gelu"                       | "relu"                                            |
| positions      | "learned"                    | "rope"; "rope_ntk": RoPE whose base grows past `train_length`; "none" |
| position_limit | None                         | n: learned positions >= n read row n-1 (seed 003's clamp) |
| scaled_init    | True                         | False: the residual writers keep std 0.02         |
| block_norm     | False                        | True: a norm on the stream before every block (seed 003 §2.15.6) |
| ffn            | "standard"                   | "swiglu": fc2(SiLU(gate) * up), no biases (seed 003 §2.21.3) |
| kv_heads       | None (= n_heads)             | k < n_heads: grouped-query attention, k key/value heads (§2.21.3) |
| tied_head      | False                        | True: the head reuses the token embedding (seed 003 §2.17.5 row 5) |

With the defaults the parameter names, shapes, initial values and outputs are the frozen
model's (tests/test_labs.py proves it).  `forward(..., collect=True)` also returns the residual
stream before every block and after the last, and every head's attention weights: what the
diagnostics read.  Attention runs on PyTorch's fused kernel unless weights are collected.
"""

import math
from dataclasses import asdict, dataclass, fields, replace
from typing import NamedTuple, Optional

import torch
import torch.nn.functional as F
from torch import nn

from .. import model as frozen

PLACEMENTS = ("pre", "post")
NORMS = ("layer", "rms", "none")
FINAL_NORMS = ("before_head", "none", "twice", "after_head")
POSITIONS = ("learned", "rope", "rope_ntk", "none")
FFNS = ("standard", "swiglu")
ROPES = ("rope", "rope_ntk")


@dataclass(frozen=True)
class Variant:
    placement: str = "pre"
    norm: str = "layer"
    norm_axis: str = "feature"
    eps: float = frozen.EPS
    residual: bool = True
    attention_bias: bool = False
    ffn_bias: bool = True
    final_norm: str = "before_head"
    activation: str = "gelu"
    positions: str = "learned"
    rope_base: float = 10000.0
    train_length: Optional[int] = None  # RoPE-NTK: the context length trained on
    position_limit: Optional[int] = None  # learned: positions from here on read the row before it
    scaled_init: bool = True
    block_norm: bool = False
    ffn: str = "standard"
    kv_heads: Optional[int] = None  # grouped-query attention: this many key/value heads
    tied_head: bool = False

    def __post_init__(self):
        for name, allowed in (("placement", PLACEMENTS), ("norm", NORMS), ("norm_axis", ("feature", "time")),
                              ("final_norm", FINAL_NORMS), ("activation", ("gelu", "relu")),
                              ("positions", POSITIONS), ("ffn", FFNS)):
            if getattr(self, name) not in allowed:
                raise ValueError(f"Variant.{name} must be one of {allowed}, not {getattr(self, name)!r}")
        if self.positions == "rope_ntk" and not self.train_length:
            raise ValueError("positions='rope_ntk' needs train_length, the context length trained on")

    def changes(self):
        """{field: value} for every field that differs from the frozen model's setting."""
        default = Variant()
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) != getattr(default, f.name)}

    def as_dict(self):
        return asdict(self)


FROZEN = Variant()


class RMSNorm(nn.Module):
    """x / sqrt(mean(x^2) + eps) * weight, the mean taken in float32 whatever x's dtype (half
    precision would lose the small squares); no bias, no centring."""

    def __init__(self, d_model, eps=frozen.EPS):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d_model))

    def forward(self, x):
        x32 = x.float()
        scaled = x32 * torch.rsqrt(x32.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return (scaled * self.weight.float()).to(x.dtype)


class TimeAxisLayerNorm(frozen.LayerNorm):
    """The failure mode "the wrong normalisation axis": statistics over the time axis of
    [B, T, d] instead of the features, so every position's output depends on later positions."""

    def forward(self, x):
        mean = x.mean(dim=-2, keepdim=True)
        variance = (x - mean).pow(2).mean(dim=-2, keepdim=True)
        return (x - mean) / torch.sqrt(variance + self.eps) * self.weight + self.bias


def make_norm(d_model, variant):
    if variant.norm == "none":
        return nn.Identity()
    if variant.norm == "rms":
        return RMSNorm(d_model, variant.eps)
    kind = TimeAxisLayerNorm if variant.norm_axis == "time" else frozen.LayerNorm
    return kind(d_model, variant.eps)


def rope_frequencies(head_dim, base):
    return base ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)


def apply_rope(t, start, variant):
    """Rotate each pair (2i, 2i+1) of the features of [B, h, T, d_h] by angle p * f_i, p the
    absolute position (start, start+1, ...).  RoPE-NTK raises the base to
    base * s^(d_h / (d_h - 2)) once the sequence is s times longer than the training length."""
    head_dim, length = t.shape[-1], t.shape[-2]
    base = variant.rope_base
    if variant.positions == "rope_ntk":
        scale = max(1.0, (start + length) / variant.train_length)
        base = base * scale ** (head_dim / (head_dim - 2))
    positions = torch.arange(start, start + length, dtype=torch.float64, device=t.device)
    angles = positions[:, None] * rope_frequencies(head_dim, base).to(t.device)
    cos, sin = angles.cos().to(t.dtype), angles.sin().to(t.dtype)
    even, odd = t[..., 0::2], t[..., 1::2]
    return torch.stack((even * cos - odd * sin, even * sin + odd * cos), dim=-1).flatten(-2)


class LabAttention(frozen.CausalSelfAttention):
    """Chapter 4's attention (same parameter names, mask buffer and cache) with optional
    projection biases, RoPE and grouped-query attention (kv_heads key/value heads, each shared
    by n_heads / kv_heads query heads; the cache holds only those); it can hand back its
    weights [B, h, T, T_total]."""

    def __init__(self, cfg, variant):
        super().__init__(cfg)
        self.variant = variant
        self.kv_heads = variant.kv_heads or cfg.n_heads
        if cfg.n_heads % self.kv_heads:
            raise ValueError(f"kv_heads={self.kv_heads} must divide n_heads={cfg.n_heads}")
        qkv_width = cfg.d_model + 2 * self.kv_heads * self.head_dim
        if variant.attention_bias or qkv_width != 3 * cfg.d_model:
            self.qkv = nn.Linear(cfg.d_model, qkv_width, bias=variant.attention_bias)
        if variant.attention_bias:
            self.proj = nn.Linear(cfg.d_model, cfg.d_model, bias=True)

    def split_kv_heads(self, t):
        batch, length, _ = t.shape
        return t.view(batch, length, self.kv_heads, self.head_dim).transpose(1, 2)

    def forward(self, x, past_key_value=None, use_cache=False, need_weights=False):
        width, kv_width = x.shape[-1], self.kv_heads * self.head_dim
        queries, keys, values = self.qkv(x).split((width, kv_width, kv_width), dim=-1)
        q, k, v = self.split_heads(queries), self.split_kv_heads(keys), self.split_kv_heads(values)
        past_length = 0 if past_key_value is None else past_key_value[0].shape[2]
        if self.variant.positions in ROPES:
            q, k = apply_rope(q, past_length, self.variant), apply_rope(k, past_length, self.variant)
        if past_key_value is not None:
            k = torch.cat([past_key_value[0], k], dim=2)
            v = torch.cat([past_key_value[1], v], dim=2)
        present = (k, v) if use_cache else None
        if self.kv_heads != self.n_heads:  # each key/value head serves a group of query heads
            k, v = (t.repeat_interleave(self.n_heads // self.kv_heads, dim=1) for t in (k, v))
        length, total = q.shape[2], k.shape[2]
        allowed = self.causal_mask[total - length : total, :total]
        weights = None
        if need_weights:  # written out, as in chapter 4, to keep the weights
            scores = (q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])).masked_fill(~allowed, float("-inf"))
            weights = torch.softmax(scores, dim=-1)
            out = self.attn_dropout(weights) @ v
        else:
            dropout = self.attn_dropout.p if self.training else 0.0
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed, dropout_p=dropout)
        return self.proj(self.merge_heads(out)), present, weights


class LabFeedForward(frozen.FeedForward):
    """Chapter 5's FFN (its forward), with or without biases, GELU or ReLU."""

    def __init__(self, cfg, variant):
        super().__init__(cfg)
        if not variant.ffn_bias:
            self.fc1 = nn.Linear(cfg.d_model, cfg.d_ff, bias=False)
            self.fc2 = nn.Linear(cfg.d_ff, cfg.d_model, bias=False)
        if variant.activation == "relu":
            self.activation = nn.ReLU()


class SwiGLU(nn.Module):
    """The gated FFN of LLaMA-style models: fc2(SiLU(x W_gate) * (x W_up)), no biases; fc1 holds
    W_gate and W_up side by side, so fc2 stays the residual writer the scaled init reads."""

    def __init__(self, cfg):
        super().__init__()
        self.fc1 = nn.Linear(cfg.d_model, 2 * cfg.d_ff, bias=False)
        self.fc2 = nn.Linear(cfg.d_ff, cfg.d_model, bias=False)
        self.dropout = nn.Dropout(cfg.dropout)

    def forward(self, x):
        gate, up = self.fc1(x).chunk(2, dim=-1)
        return self.dropout(self.fc2(F.silu(gate) * up))


def swiglu_width(d_model, d_ff):
    """The SwiGLU hidden width whose three matrices hold about as many parameters as the
    standard FFN's two (with biases) at d_ff: (2 d f + f + d) / 3d, rounded."""
    return round((2 * d_model * d_ff + d_ff + d_model) / (3 * d_model))


class LabBlock(nn.Module):
    """The block with seed 004's placement switch and the residual switch; sub-module names as
    in model.TransformerBlock."""

    def __init__(self, cfg, variant):
        super().__init__()
        self.variant = variant
        self.ln_attention = make_norm(cfg.d_model, variant)
        self.attention = LabAttention(cfg, variant)
        self.ln_feedforward = make_norm(cfg.d_model, variant)
        self.feedforward = SwiGLU(cfg) if variant.ffn == "swiglu" else LabFeedForward(cfg, variant)

    def forward(self, hidden, past_key_value=None, use_cache=False, need_weights=False):
        keep = 1.0 if self.variant.residual else 0.0  # 0: the sublayer's output replaces the stream
        if self.variant.placement == "pre":
            attended, present, weights = self.attention(self.ln_attention(hidden), past_key_value, use_cache,
                                                        need_weights)
            hidden = keep * hidden + attended
            hidden = keep * hidden + self.feedforward(self.ln_feedforward(hidden))
        else:  # post-LN, the 2017 paper's order: U = LN1(X + Attn(X)), Y = LN2(U + FFN(U))
            attended, present, weights = self.attention(hidden, past_key_value, use_cache, need_weights)
            hidden = self.ln_attention(keep * hidden + attended)
            hidden = self.ln_feedforward(keep * hidden + self.feedforward(hidden))
        return hidden, present, weights


class LabOutput(NamedTuple):
    logits: torch.Tensor
    loss: Optional[torch.Tensor]
    past_key_values: Optional[list]
    hidden_states: Optional[list]  # collect=True: the stream before each block and after the last
    attentions: Optional[list]  # collect=True: each block's weights [B, h, T, T_total]


class LabLM(nn.Module):
    """model.TransformerLM with a Variant; with Variant() it is the frozen model."""

    def __init__(self, cfg, variant=FROZEN):
        super().__init__()
        self.cfg, self.variant = cfg, variant
        self.token_embedding = nn.Embedding(cfg.vocab_size, cfg.d_model)
        if variant.positions == "learned":
            self.position_embedding = nn.Embedding(cfg.block_size, cfg.d_model)
        self.dropout = nn.Dropout(cfg.dropout)
        self.blocks = nn.ModuleList(LabBlock(cfg, variant) for _ in range(cfg.n_layers))
        if variant.block_norm:  # seed 003 §2.15.6's "writing B": a norm on the identity path before every block
            self.block_norms = nn.ModuleList(make_norm(cfg.d_model, variant) for _ in range(cfg.n_layers))
        if variant.final_norm != "none":
            self.ln_f = make_norm(cfg.d_model, variant)
        if variant.final_norm == "twice":
            self.ln_extra = make_norm(cfg.d_model, variant)
        self.head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)
        if variant.tied_head:  # one matrix both reads tokens in and scores them out
            self.head.weight = self.token_embedding.weight
        if variant.final_norm == "after_head":  # normalises the logits, over the vocabulary
            self.ln_f = make_norm(cfg.vocab_size, variant)

    def forward(self, idx, targets=None, past_key_values=None, use_cache=False, collect=False):
        past_length = 0 if past_key_values is None else past_key_values[0][0].shape[2]
        if past_length + idx.shape[1] > self.cfg.block_size:
            raise ValueError(f"sequence length {past_length + idx.shape[1]} exceeds block_size={self.cfg.block_size}")
        hidden = self.token_embedding(idx)
        if self.variant.positions == "learned":
            rows = torch.arange(past_length, past_length + idx.shape[1], device=idx.device)
            if self.variant.position_limit is not None:
                rows = rows.clamp(max=self.variant.position_limit - 1)
            hidden = hidden + self.position_embedding.weight[rows]
        hidden = self.dropout(hidden)
        states, attentions = ([hidden], []) if collect else (None, None)
        presents = [] if use_cache else None
        for layer, block in enumerate(self.blocks):
            past = None if past_key_values is None else past_key_values[layer]
            if self.variant.block_norm:
                hidden = self.block_norms[layer](hidden)
            hidden, present, weights = block(hidden, past, use_cache, need_weights=collect)
            if use_cache:
                presents.append(present)
            if collect:
                states.append(hidden)
                attentions.append(weights)
        final = self.variant.final_norm
        if final in ("before_head", "twice"):
            hidden = self.ln_f(hidden)
        if final == "twice":
            hidden = self.ln_extra(hidden)
        logits = self.head(hidden)
        if final == "after_head":
            logits = self.ln_f(logits)
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))
        return LabOutput(logits, loss, presents, states, attentions)


def init_lab_weights(model, generator=None):
    """Seed 003's initialisation (model.init_weights, the same draws in the same order); then
    RMSNorm gains to one, and without `scaled_init` the residual writers multiplied back by
    sqrt(2N) so their std is 0.02 like every other matrix (the same draws, only the scale
    differs).  Returns the model."""
    frozen.init_weights(model, generator)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            owner = model.get_submodule(name.rpartition(".")[0])
            if isinstance(owner, RMSNorm):
                parameter.fill_(1.0)
            elif not model.variant.scaled_init and name.endswith(frozen.RESIDUAL_WRITERS):
                parameter.mul_(math.sqrt(2 * model.cfg.n_layers))
    return model


def build(cfg, variant=FROZEN, seed=0, device="cpu"):
    """A LabLM initialised from `seed`, on `device`."""
    model = init_lab_weights(LabLM(cfg, variant), torch.Generator().manual_seed(seed))
    return model.to(device)


def retarget(model, **changes):
    """Switch settings that need no other parameters (e.g. evaluate a RoPE model as RoPE-NTK,
    or change eps) on `model` and every sub-module that reads its variant; returns the model."""
    variant = replace(model.variant, **changes)
    for module in model.modules():
        if hasattr(module, "variant"):
            module.variant = variant
    for module in model.modules():
        if hasattr(module, "eps") and "eps" in changes:
            module.eps = variant.eps
    return model

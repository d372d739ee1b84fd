"""A small decoder-only Transformer, built chapter by chapter.

Frozen conventions (README.md, "The model"):
pre-LN blocks, two independent LayerNorms per block (LN2 reads U),
population variance with eps = 1e-5 inside the square root, exact (erf) GELU,
bias-free Q/K/V/O projections, FFN with biases, learned absolute positions,
a final LayerNorm and an untied output head.

Exercise bodies are fenced with nbgrader's solution markers; each chapter's
student release replaces them with ``raise NotImplementedError('<id>')``.
"""

import math
from dataclasses import dataclass
from typing import NamedTuple, Optional

import torch
import torch.nn.functional as F
from torch import nn

EPS = 1e-5


@dataclass(frozen=True)
class Config:
    vocab_size: int
    block_size: int
    d_model: int
    n_heads: int
    n_layers: int
    d_ff: int
    dropout: float = 0.0

    def __post_init__(self):
        if self.d_model % self.n_heads != 0:
            raise ValueError(
                f"d_model={self.d_model} 必须能被 n_heads={self.n_heads} 整除 "
                f"(d_model must be divisible by n_heads)"
            )


# --- Chapter 5: normalisation, activation, feed-forward, the block ---------


class LayerNorm(nn.Module):
    """Per-position LayerNorm over the last (feature) axis."""

    def __init__(self, d_model: int, eps: float = EPS):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d_model))  # gamma
        self.bias = nn.Parameter(torch.zeros(d_model))  # beta

    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        centered = x - mean
        variance = (centered * centered).mean(dim=-1, keepdim=True)
        return centered / torch.sqrt(variance + self.eps) * self.weight + self.bias


def gelu(x):
    """Exact GELU: x * Phi(x), with Phi the standard normal CDF."""
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))


class GELU(nn.Module):
    def forward(self, x):
        return gelu(x)


class FeedForward(nn.Module):
    """Position-wise FFN: Linear(d, f) -> GELU -> Linear(f, d), both with biases."""

    def __init__(self, cfg: Config):
        super().__init__()
        self.fc1 = nn.Linear(cfg.d_model, cfg.d_ff)
        self.activation = GELU()
        self.fc2 = nn.Linear(cfg.d_ff, cfg.d_model)
        self.dropout = nn.Dropout(cfg.dropout)

    def forward(self, x):
        return self.dropout(self.fc2(self.activation(self.fc1(x))))


# --- Chapter 4: causal multi-head attention ----------------------------------


def attention_scores(q, k):
    """[..., T_q, d_h] queries and [..., T_k, d_h] keys -> [..., T_q, T_k] scores q.k / sqrt(d_h)."""
    return q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])


def stable_softmax(scores):
    """Softmax over the last axis, computed after subtracting each row's maximum so that
    exp never overflows; -inf scores get weight exactly 0."""
    shifted = scores - scores.amax(dim=-1, keepdim=True)
    exps = torch.exp(shifted)
    return exps / exps.sum(dim=-1, keepdim=True)


class CausalSelfAttention(nn.Module):
    """Multi-head causal self-attention with a key/value cache.

    ``past_key_value`` is ``(keys, values)``, each ``[B, h, T_past, d_h]``.
    Returns ``(output, present)``; ``present`` is the extended cache when
    ``use_cache`` is true and ``None`` otherwise.  Dropout acts on the attention
    weights only (the FFN's dropout is the block's other one, seed 004).
    """

    def __init__(self, cfg: Config):
        super().__init__()
        self.n_heads = cfg.n_heads
        self.head_dim = cfg.d_model // cfg.n_heads
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model, bias=False)  # fused [3d, d]
        self.proj = nn.Linear(cfg.d_model, cfg.d_model, bias=False)
        self.attn_dropout = nn.Dropout(cfg.dropout)
        # registered once for the longest context and sliced per call (seed 004); not a
        # parameter and not saved in the state dict
        causal = torch.ones(cfg.block_size, cfg.block_size, dtype=torch.bool).tril()
        self.register_buffer("causal_mask", causal, persistent=False)

    def split_heads(self, t):
        """[B, T, d] -> [B, h, T, d_h]: head j holds features j*d_h .. (j+1)*d_h - 1."""
        batch, length, _ = t.shape
        return t.view(batch, length, self.n_heads, self.head_dim).transpose(1, 2)

    def merge_heads(self, t):
        """[B, h, T, d_h] -> [B, T, d], the inverse of split_heads."""
        batch, heads, length, head_dim = t.shape
        return t.transpose(1, 2).reshape(batch, length, heads * head_dim)

    def forward(self, x, past_key_value=None, use_cache=False):
        """x [B, T, d] -> (output [B, T, d], present).  Built from this chapter's parts, called by
        name: self.qkv, self.split_heads, attention_scores, the slice of self.causal_mask,
        stable_softmax, self.attn_dropout, self.merge_heads, self.proj."""
        batch, length, width = x.shape
        q, k, v = (self.split_heads(t) for t in self.qkv(x).split(width, dim=-1))
        if past_key_value is not None:
            past_k, past_v = past_key_value
            k = torch.cat([past_k, k], dim=2)
            v = torch.cat([past_v, v], dim=2)
        total = k.shape[2]
        # query i sits at absolute position total - length + i and may see keys up to it
        allowed = self.causal_mask[total - length : total, :total]
        scores = attention_scores(q, k).masked_fill(~allowed, float("-inf"))
        weights = self.attn_dropout(stable_softmax(scores))
        present = (k, v) if use_cache else None
        return self.proj(self.merge_heads(weights @ v)), present


# --- Chapter 5: the pre-LN block --------------------------------------------


class TransformerBlock(nn.Module):
    def __init__(self, cfg: Config):
        super().__init__()
        self.ln_attention = LayerNorm(cfg.d_model)
        self.attention = CausalSelfAttention(cfg)
        self.ln_feedforward = LayerNorm(cfg.d_model)
        self.feedforward = FeedForward(cfg)

    def forward(self, hidden, past_key_value=None, use_cache=False):
        """Pre-LN: U = X + Attn(LN1(X)); Y = U + FFN(LN2(U)). Returns (Y, present)."""
        attended, present = self.attention(self.ln_attention(hidden), past_key_value, use_cache)
        hidden = hidden + attended
        hidden = hidden + self.feedforward(self.ln_feedforward(hidden))
        return hidden, present


def parameter_count(V, C, N, d, f):
    """Registered parameters of TransformerLM: vocabulary V, positions C, N blocks,
    width d, FFN width f (heads do not change the count)."""
    per_block = 4 * d * d + 2 * d * f + f + d + 4 * d
    return 2 * V * d + C * d + N * per_block + 2 * d


# --- Chapter 7: the whole model -------------------------------------------------


class LMOutput(NamedTuple):
    logits: torch.Tensor
    loss: Optional[torch.Tensor]
    past_key_values: Optional[list]


# the two matrices that write into the residual stream (seed 003, GPT-2): their std is
# scaled by 1/sqrt(2N), N blocks with two residual branches each
RESIDUAL_WRITERS = ("attention.proj.weight", "feedforward.fc2.weight")


class TransformerLM(nn.Module):
    def __init__(self, cfg: Config):
        super().__init__()
        self.cfg = cfg
        self.token_embedding = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.position_embedding = nn.Embedding(cfg.block_size, cfg.d_model)
        self.dropout = nn.Dropout(cfg.dropout)
        # N distinct blocks: parameters are never shared between layers
        self.blocks = nn.ModuleList(TransformerBlock(cfg) for _ in range(cfg.n_layers))
        self.ln_f = LayerNorm(cfg.d_model)
        self.head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)  # untied

    def forward(self, idx, targets=None, past_key_values=None, use_cache=False):
        """[B, T] int64 ids -> LMOutput(logits [B, T, V], loss, past_key_values).

        Built from the parts, called by name, in this order: chapter 2's `embed(idx,
        self.token_embedding.weight)`; chapter 3's `add_positions(tokens,
        self.position_embedding.weight, start=past_length)`, where past_length is the number
        of positions already in the cache (the time axis of a cached key, [B, h, T_past, d_h]),
        0 without one; `self.dropout`; every block of `self.blocks`, in order, each called as
        `block(hidden, past, use_cache)` with its own entry `past_key_values[i]` (None without
        a cache); `self.ln_f`; the untied `self.head`.
        loss: the mean cross entropy of the logits against `targets` ([B, T] ids) over all
        B*T positions, None when targets is None.  past_key_values of the output: the list of
        every block's present, in order, when use_cache is true; None otherwise.
        A sequence that reaches past block_size raises ValueError (add_positions does)."""
        # chapters 2 and 3 do the lookup and add the positions (imported here so that model.py
        # loads whatever state those files are in: each exercise is graded alone)
        from .embeddings import embed
        from .positions import add_positions

        # 练习 model_forward：整机前向：logits、损失与 KV cache（见本章 notebook）
        raise NotImplementedError('model_forward')


def init_weights(model, generator=None):
    """Seed 003's initialisation, in place, visiting `model.named_parameters()` in order; returns
    `model`.

    - the weight of every nn.Linear and nn.Embedding: drawn with chapter 2's
      `init_normal_(weight, std=..., generator=generator)` (called by name), std 0.02
      (embeddings.INIT_STD), except the two matrices that write into the residual stream,
      `blocks.<i>.attention.proj.weight` and `blocks.<i>.feedforward.fc2.weight`, whose std is
      0.02 / sqrt(2 * n_layers) (n_layers = model.cfg.n_layers);
    - every nn.Linear bias: zero;
    - every LayerNorm (this module's class): weight one, bias zero.
    With the same generator state it gives the same weights; nothing else is drawn from it.
    TransformerLM.__init__ does not call it: call init_weights(TransformerLM(cfg), generator)."""
    from .embeddings import INIT_STD, init_normal_

    # 练习 init_weights：种子教材 003 的初始化（0.02 与 1/√(2N)）（见本章 notebook）
    raise NotImplementedError('init_weights')

"""hero_transformer: the course's decoder-only Transformer, built chapter by chapter."""

from .model import (
    EPS, Config, LayerNorm, gelu, GELU, FeedForward, CausalSelfAttention,
    TransformerBlock, TransformerLM, LMOutput, parameter_count, init_weights,
)

__all__ = [
    "EPS", "Config", "LayerNorm", "gelu", "GELU", "FeedForward", "CausalSelfAttention",
    "TransformerBlock", "TransformerLM", "LMOutput", "parameter_count", "init_weights",
]

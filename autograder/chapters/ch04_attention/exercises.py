"""The stubs chapter 4 puts in hero_transformer/model.py, and the shortcuts each forbids."""

from autograder.registry import Exercise, Forbidden

SOFTMAX_OPS = ("_softmax", "softmax", "_safe_softmax", "_log_softmax", "log_softmax")
SDPA_OPS = ("scaled_dot_product_attention", "_scaled_dot_product_attention_math",
            "_scaled_dot_product_flash_attention", "_scaled_dot_product_flash_attention_for_cpu",
            "_scaled_dot_product_efficient_attention", "_scaled_dot_product_cudnn_attention",
            "_scaled_dot_product_fused_attention_overrideable")

EXERCISES = (
    Exercise("attention_scores", 4, "attention_scores", "缩放点积分数 QKᵀ/√d_h", "scaled dot-product scores QK^T/sqrt(d_h)"),
    Exercise("stable_softmax", 4, "stable_softmax", "数值稳定的 softmax", "a numerically stable softmax",
             (Forbidden("torch.softmax / torch.nn.functional.softmax (or log_softmax)", ops=SOFTMAX_OPS),)),
    Exercise("split_heads", 4, "CausalSelfAttention.split_heads", "拆分多头", "splitting heads"),
    Exercise("merge_heads", 4, "CausalSelfAttention.merge_heads", "合并多头", "merging heads"),
    Exercise("attention", 4, "CausalSelfAttention.forward", "带 KV 缓存的因果多头注意力",
             "causal multi-head attention with a KV cache",
             (Forbidden("torch.nn.functional.scaled_dot_product_attention", ops=SDPA_OPS),)),
)

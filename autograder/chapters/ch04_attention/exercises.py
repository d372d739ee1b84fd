"""The stubs chapter 4 puts in hero_transformer/model.py, and the shortcuts each forbids."""

from autograder.registry import Exercise, Forbidden

SOFTMAX_OPS = ("_softmax", "softmax", "_safe_softmax", "_log_softmax", "log_softmax", "_masked_softmax",
               "_sparse_softmax", "_sparse_log_softmax", "_nested_tensor_softmax_with_shape")
SDPA_OPS = ("scaled_dot_product_attention", "_scaled_dot_product_attention_math",
            "_scaled_dot_product_flash_attention", "_scaled_dot_product_flash_attention_for_cpu",
            "_scaled_dot_product_efficient_attention", "_scaled_dot_product_cudnn_attention",
            "_scaled_dot_product_fused_attention_overrideable", "_scaled_dot_product_attention_math_for_mps",
            "_flash_attention_forward", "_efficient_attention_forward", "_cudnn_attention_forward",
            "_native_multi_head_attention", "_triton_multi_head_attention", "_triton_scaled_dot_attention",
            "_transformer_encoder_layer_fwd")
# composites: the dispatcher decomposes them (the math backend into bmm and _safe_softmax) before the
# operator watch sees them, so they are seen by name
SDPA_FUNCTIONS = ("scaled_dot_product_attention", "_scaled_dot_product_attention_math")
# torch's attention written in Python: any operator beneath them is the shortcut
SDPA_INTERNALS = ("torch.nn.functional.multi_head_attention_forward", "torch.nn.attention.flex_attention")

EXERCISES = (
    Exercise("attention_scores", 4, "attention_scores", "缩放点积分数 QKᵀ/√d_h", "scaled dot-product scores QK^T/sqrt(d_h)"),
    Exercise("stable_softmax", 4, "stable_softmax", "数值稳定的 softmax", "a numerically stable softmax",
             (Forbidden("torch.softmax / torch.nn.functional.softmax (or log_softmax)", ops=SOFTMAX_OPS),)),
    # rearranging axes: view and reshape may return a view of the input, which is what they are for
    Exercise("split_heads", 4, "CausalSelfAttention.split_heads", "拆分多头", "splitting heads", may_share=("x",)),
    Exercise("merge_heads", 4, "CausalSelfAttention.merge_heads", "合并多头", "merging heads", may_share=("x",)),
    Exercise("attention", 4, "CausalSelfAttention.forward", "带 KV 缓存的因果多头注意力",
             "causal multi-head attention with a KV cache",
             (Forbidden("torch.nn.functional.scaled_dot_product_attention (or multi_head_attention_forward, "
                        "nn.MultiheadAttention, flex_attention)", ops=SDPA_OPS, functions=SDPA_FUNCTIONS,
                        internals=SDPA_INTERNALS),)),
)

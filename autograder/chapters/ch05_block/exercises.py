"""The stubs chapter 5 puts in hero_transformer/model.py, and the shortcuts each forbids."""

from autograder.registry import Exercise, Forbidden

BUILT_IN_NORMS = ("native_layer_norm", "native_group_norm", "native_batch_norm", "_native_batch_norm_legit",
                  "_native_batch_norm_legit_no_training", "_native_batch_norm_legit_functional",
                  "_batch_norm_with_update", "_batch_norm_with_update_functional", "_batch_norm_no_update",
                  "cudnn_batch_norm", "miopen_batch_norm", "batch_norm_elemt", "_fused_rms_norm",
                  "_transformer_encoder_layer_fwd")
# composites the dispatcher decomposes into elementary operators before the operator watch sees them:
# rms_norm of the centred input is exactly LayerNorm
NORM_FUNCTIONS = ("rms_norm", "_fused_rms_norm")

# torch's exact GELU kernel, alone or fused after a matrix product (use_gelu, oneDNN's "gelu" attr)
GELU_KERNELS = ("gelu", "gelu_", "_addmm_activation", "_linear_pointwise", "_convolution_pointwise",
                "_convolution_pointwise_", "_convolution_transpose_pointwise")
EXERCISES = (
    Exercise("layer_norm", 5, "LayerNorm.forward", "逐位置 LayerNorm", "per-position LayerNorm",
             (Forbidden("torch.nn.functional.layer_norm / torch.layer_norm / nn.LayerNorm (or another built-in norm)",
                        ops=BUILT_IN_NORMS, functions=NORM_FUNCTIONS),)),
    Exercise("gelu", 5, "gelu", "精确 GELU", "exact GELU",
             (Forbidden("torch.nn.functional.gelu / nn.GELU", ops=GELU_KERNELS),)),
    Exercise("feedforward", 5, "FeedForward.forward", "逐位置前馈网络 FFN", "position-wise feed-forward network"),
    Exercise("block", 5, "TransformerBlock.forward", "pre-LN 解码块", "the pre-LN decoder block"),
    Exercise("parameter_count", 5, "parameter_count", "参数账本公式", "the parameter ledger formula",
             (Forbidden("building a model (TransformerLM or any nn.Module) to count its parameters",
                        builds_modules=True),)),
)

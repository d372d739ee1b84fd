"""The stubs chapter 5 puts in hero_transformer/model.py, and the shortcuts each forbids."""

from autograder.registry import Exercise, Forbidden

BUILT_IN_NORMS = ("native_layer_norm", "native_group_norm", "native_batch_norm", "_native_batch_norm_legit",
                  "_native_batch_norm_legit_no_training")

EXERCISES = (
    Exercise("layer_norm", 5, "LayerNorm.forward", "逐位置 LayerNorm", "per-position LayerNorm",
             (Forbidden("torch.nn.functional.layer_norm / torch.layer_norm / nn.LayerNorm (or another built-in norm)",
                        ops=BUILT_IN_NORMS),)),
    Exercise("gelu", 5, "gelu", "精确 GELU", "exact GELU",
             (Forbidden("torch.nn.functional.gelu / nn.GELU", ops=("gelu",)),)),
    Exercise("feedforward", 5, "FeedForward.forward", "逐位置前馈网络 FFN", "position-wise feed-forward network"),
    Exercise("block", 5, "TransformerBlock.forward", "pre-LN 解码块", "the pre-LN decoder block"),
    Exercise("parameter_count", 5, "parameter_count", "参数账本公式", "the parameter ledger formula",
             (Forbidden("building a model (TransformerLM or any nn.Module) to count its parameters",
                        builds_modules=True),)),
)

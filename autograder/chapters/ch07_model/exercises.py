"""The stubs chapter 7 puts in hero_transformer/model.py and hero_transformer/audit.py.

None forbids a call: the forward and init_weights must call the earlier chapters' parts by
name (embed, add_positions, the blocks, ln_f, head; init_normal_), and the probes replace each
of those with a test double, so a body that goes around one of them computes other values."""

from autograder.registry import Exercise

EXERCISES = (
    Exercise("model_forward", 7, "TransformerLM.forward", "整机前向：logits、损失与 KV cache",
             "the whole model's forward: logits, loss and the KV cache", module="model"),
    Exercise("init_weights", 7, "init_weights", "种子教材 003 的初始化（0.02 与 1/√(2N)）",
             "seed 003's initialisation (0.02 and 1/sqrt(2N))", module="model"),
    Exercise("frozen_parameters", 7, "frozen_parameters", "问题一：哪些参数没有梯度资格",
             "question 1: which parameters may not have a gradient", module="audit"),
    Exercise("unreached_parameters", 7, "unreached_parameters", "问题二：哪些参数这一批没有得到梯度",
             "question 2: which parameters got no gradient from this batch", module="audit"),
    Exercise("unoptimized_parameters", 7, "unoptimized_parameters", "问题三：哪些参数优化器没有持有",
             "question 3: which parameters the optimizer does not hold", module="audit"),
    Exercise("ledger_gap", 7, "ledger_gap", "账本与注册参数之差", "the ledger minus the registered count",
             module="audit"),
)

"""The stubs chapter 8 puts in hero_transformer/train.py.

None forbids a shortcut: every call that could stand in for an exercise is one the exercise is
meant to make (clip_grad_norm_, torch.multinomial, softmax) or would not compute its value."""

from autograder.registry import Exercise

MODULE = "train"

EXERCISES = (
    Exercise("get_batch", 8, "get_batch", "随机取一批训练窗口", "a random batch of training windows", module=MODULE),
    Exercise("parameter_groups", 8, "parameter_groups", "AdamW 的两个参数组（哪些衰减）",
             "AdamW's two parameter groups (which ones decay)", module=MODULE),
    Exercise("lr_at", 8, "lr_at", "warmup 加余弦衰减的学习率", "the learning rate: warmup, then cosine decay",
             module=MODULE),
    Exercise("train_step", 8, "train_step", "一步训练：nan 即停、梯度裁剪", "one training step: stop on nan, clip",
             module=MODULE),
    Exercise("evaluate", 8, "evaluate", "留出集上的每词元交叉熵", "held-out cross entropy per token", module=MODULE),
    Exercise("next_token_probs", 8, "next_token_probs", "温度与 top-k 下的下一词元分布",
             "next-token probabilities with temperature and top-k", module=MODULE),
    # with nothing to generate, the prompts are the whole answer: returning them as they are is fine
    Exercise("generate", 8, "generate", "逐词元生成（带或不带 KV 缓存）", "generation token by token, with or without the KV cache",
             module=MODULE, may_share=("prompt",)),
)

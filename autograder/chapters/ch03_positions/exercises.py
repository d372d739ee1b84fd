"""The stubs chapter 3 puts in hero_transformer/positions.py, and the shortcuts each forbids."""

from autograder.registry import Exercise, Forbidden

EXERCISES = (
    Exercise("position_ids", 3, "position_ids", "位置编号与长度上限", "position ids and the length limit",
             module="positions"),
    Exercise("add_positions", 3, "add_positions", "把位置表加到词向量上", "adding the position table to token vectors",
             module="positions",
             forbids=(Forbidden("torch.nn.functional.embedding / nn.Embedding (the rows are a slice of the table)",
                                ops=("embedding", "_embedding_bag", "_embedding_bag_forward_only"),
                                builds_modules=True),)),
    Exercise("untrained_positions", 3, "untrained_positions", "从未被训练的位置行",
             "position rows no training sequence reaches", module="positions"),
)

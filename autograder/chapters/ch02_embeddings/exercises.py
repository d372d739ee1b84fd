"""The stubs chapter 2 puts in hero_transformer/embeddings.py, and the shortcuts each forbids."""

from autograder.registry import Exercise, Forbidden

EXERCISES = (
    Exercise("one_hot", 2, "one_hot", "one-hot 编码", "one-hot rows", module="embeddings"),
    Exercise("embed", 2, "embed", "查表：[B,T] 到 [B,T,d]", "the lookup: [B,T] to [B,T,d]", module="embeddings",
             forbids=(Forbidden("torch.nn.functional.embedding / nn.Embedding", ops=("embedding",),
                                builds_modules=True),)),
    Exercise("embedding_grad", 2, "embedding_grad", "嵌入表的梯度", "the gradient of the embedding table",
             module="embeddings",
             forbids=(Forbidden("autograd through torch.nn.functional.embedding",
                                ops=("embedding", "embedding_dense_backward", "embedding_backward")),)),
    Exercise("init_normal", 2, "init_normal_", "N(0, 0.02²) 初始化", "N(0, 0.02^2) initialisation",
             module="embeddings"),
)

"""The stubs chapter 2 puts in hero_transformer/embeddings.py, and the shortcuts each forbids."""

from autograder.registry import Exercise, Forbidden

# the lookup, by every aten operator that does it (embedding_bag over one-id bags is a lookup too)
EMBEDDING_OPS = ("embedding", "_embedding_bag", "_embedding_bag_forward_only")
EMBEDDING_BACKWARD_OPS = ("embedding_dense_backward", "embedding_backward", "_embedding_bag_backward",
                          "_embedding_bag_dense_backward", "_embedding_bag_per_sample_weights_backward")

EXERCISES = (
    Exercise("one_hot", 2, "one_hot", "one-hot 编码", "one-hot rows", module="embeddings"),
    Exercise("embed", 2, "embed", "查表：[B,T] 到 [B,T,d]", "the lookup: [B,T] to [B,T,d]", module="embeddings",
             forbids=(Forbidden("torch.nn.functional.embedding / nn.Embedding (or embedding_bag)", ops=EMBEDDING_OPS,
                                builds_modules=True),)),
    Exercise("embedding_grad", 2, "embedding_grad", "嵌入表的梯度", "the gradient of the embedding table",
             module="embeddings",
             forbids=(Forbidden("autograd through torch.nn.functional.embedding (or its backward kernels)",
                                ops=EMBEDDING_OPS + EMBEDDING_BACKWARD_OPS,
                                # composites the dispatcher decomposes before the operator watch sees them
                                functions=("embedding_backward", "embedding_sparse_backward",
                                           "_embedding_bag_sparse_backward")),)),
    Exercise("init_normal", 2, "init_normal_", "N(0, 0.02²) 初始化", "N(0, 0.02^2) initialisation",
             module="embeddings"),
)

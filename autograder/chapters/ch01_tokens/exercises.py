"""The stubs chapter 1 puts in hero_transformer/tokens.py, and the shortcuts each forbids."""

from autograder.registry import Exercise, Forbidden

EXERCISES = (
    Exercise("build_vocab", 1, "build_vocab", "按频率建字表", "a character vocabulary by frequency", module="tokens"),
    Exercise("encode", 1, "Tokenizer.encode", "文本到 id（encode）", "text to ids (encode)", module="tokens"),
    Exercise("decode", 1, "Tokenizer.decode", "id 到文本（decode）", "ids to text (decode)", module="tokens"),
    Exercise("coverage", 1, "coverage", "字表覆盖率", "the coverage of a vocabulary", module="tokens"),
    Exercise("unigram_cross_entropy", 1, "unigram_cross_entropy", "字频（unigram）基线的交叉熵",
             "the cross entropy of the unigram baseline", module="tokens",
             forbids=(Forbidden("torch.nn.functional.cross_entropy / log_softmax / nll_loss (or a torch.distributions "
                                "distribution's log_prob)",
                                ops=("_log_softmax", "log_softmax", "nll_loss_forward", "nll_loss", "nll_loss_nd",
                                     "cross_entropy_loss", "nll_loss2d", "nll_loss2d_forward", "_sparse_log_softmax"),
                                # Categorical(probs=...).log_prob normalises the counts for you, from elementary ops
                                internals=("torch.distributions",)),)),
)

"""Chapter 1: characters to ids.

A character-level vocabulary: id 0 is the reserved unknown token `<unk>`; ids 1, 2, ...
are the corpus's characters by descending count, ties broken by code point (so the same
text always gives the same vocabulary).  The size cap counts `<unk>`: a vocabulary of 1,200
holds `<unk>` and the 1,199 most frequent characters.

Exercise bodies are fenced with nbgrader's solution markers; a chapter's student release
replaces them with ``raise NotImplementedError('<id>')``.
"""

import math
from collections import Counter

UNK = "<unk>"
UNK_ID = 0


def build_vocab(text, max_size):
    """The id-to-token list: `<unk>` first, then the most frequent characters of `text`
    (descending count, ties by code point), at most `max_size` entries in all."""
    # 练习 build_vocab：按频率建字表（见本章 notebook）
    raise NotImplementedError('build_vocab')


class Tokenizer:
    """Encodes text to ids and back with a vocabulary from `build_vocab`."""

    def __init__(self, itos):
        self.itos = list(itos)
        self.stoi = {token: index for index, token in enumerate(self.itos)}
        self.unk_id = self.stoi[UNK]

    @property
    def vocab_size(self):
        return len(self.itos)

    def encode(self, text):
        """A list of ids, one per character; a character outside the vocabulary is `<unk>`."""
        # 练习 encode：文本到 id（encode）（见本章 notebook）
        raise NotImplementedError('encode')

    def decode(self, ids):
        """The text of a sequence of ids; an id outside [0, vocab_size) is an error."""
        # 练习 decode：id 到文本（decode）（见本章 notebook）
        raise NotImplementedError('decode')


def coverage(itos, text):
    """The fraction of the characters of `text` (counted with repeats) that the vocabulary
    holds, so that they do not become `<unk>`."""
    # 练习 coverage：字表覆盖率（见本章 notebook）
    raise NotImplementedError('coverage')


def uniform_cross_entropy(vocab_size):
    """The loss of a model that gives every id the same probability: ln V nats."""
    return math.log(vocab_size)


def unigram_cross_entropy(train_ids, eval_ids, vocab_size, alpha=1.0):
    """Cross entropy in nats of `eval_ids` under the unigram (character-frequency) model of
    `train_ids`, add-alpha smoothed over the whole vocabulary:
    p(i) = (count(i) + alpha) / (len(train_ids) + alpha * vocab_size).
    With alpha = 0 and eval_ids = train_ids it is the entropy of the text's own frequencies."""
    # 练习 unigram_cross_entropy：字频（unigram）基线的交叉熵（见本章 notebook）
    raise NotImplementedError('unigram_cross_entropy')

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
    if max_size < 1:
        raise ValueError(f"max_size={max_size}: a vocabulary holds at least <unk>")
    frequencies = Counter(text)
    ranked = sorted(frequencies, key=lambda char: (-frequencies[char], ord(char)))
    return [UNK] + ranked[: max_size - 1]


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
        if not isinstance(text, str):
            raise TypeError(f"encode 需要 str，收到 {type(text).__name__} (encode takes a str)")
        return [self.stoi.get(char, self.unk_id) for char in text]

    def decode(self, ids):
        """The text of a sequence of ids; an id outside [0, vocab_size) is an error."""
        pieces = []
        for index in ids:
            index = int(index)
            if not 0 <= index < len(self.itos):
                raise ValueError(f"id {index} 不在词表范围 [0, {len(self.itos)}) 内 (id out of range)")
            pieces.append(self.itos[index])
        return "".join(pieces)


def coverage(itos, text):
    """The fraction of the characters of `text` (counted with repeats) that the vocabulary
    holds, so that they do not become `<unk>`."""
    if not text:
        raise ValueError("coverage of an empty text is undefined")
    known = set(itos) - {UNK}
    return sum(char in known for char in text) / len(text)


def uniform_cross_entropy(vocab_size):
    """The loss of a model that gives every id the same probability: ln V nats."""
    return math.log(vocab_size)


def unigram_cross_entropy(train_ids, eval_ids, vocab_size, alpha=1.0):
    """Cross entropy in nats of `eval_ids` under the unigram (character-frequency) model of
    `train_ids`, add-alpha smoothed over the whole vocabulary:
    p(i) = (count(i) + alpha) / (len(train_ids) + alpha * vocab_size).
    With alpha = 0 and eval_ids = train_ids it is the entropy of the text's own frequencies."""
    counts = Counter(int(i) for i in train_ids)
    total = len(train_ids) + alpha * vocab_size
    loss = 0.0
    for index in eval_ids:
        count = counts.get(int(index), 0) + alpha
        if count == 0:
            return math.inf
        loss -= math.log(count / total)
    return loss / len(eval_ids)

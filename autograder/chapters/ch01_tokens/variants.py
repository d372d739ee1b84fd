"""Correct chapter-1 exercise bodies written differently from the reference.

Every one must get full marks: they pin the probes to what the exercise asks, not to how the
reference happens to compute it.  `hero samples OUT` writes one sample per variant
(`correct_<id>`) and the tests grade each of them.  Same conventions as faults.py: the bodies
use only names tokens.py has (math, Counter, UNK, UNK_ID, Tokenizer), or import inside.
"""

import math  # noqa: F401  (used by variant bodies)
from collections import Counter  # noqa: F401

from autograder.registry import catalogue

UNK, UNK_ID = "<unk>", 0  # as in tokens.py

CATALOGUE, variant = catalogue("correct")


@variant("build_vocab", "sorted(set(text)) keyed by (-text.count(c), c): strings of one character compare by code point")
def count_then_character(text, max_size):
    ranked = sorted(set(text), key=lambda char: (-text.count(char), char))
    vocab = [UNK]
    for char in ranked:
        if len(vocab) == max_size:
            break
        vocab.append(char)
    return vocab


@variant("build_vocab", "two stable sorts: by code point, then by descending count")
def two_stable_sorts(text, max_size):
    counts = Counter(text)
    by_point = sorted(counts)
    by_count = sorted(by_point, key=counts.__getitem__, reverse=True)
    return ([UNK] + by_count)[:max_size]


@variant("encode", "try/except KeyError, the unknown id from the table itself")
def encode_with_try(self, text):
    if not isinstance(text, str):
        raise TypeError("encode takes a str")
    ids = []
    for char in text:
        try:
            ids.append(self.stoi[char])
        except KeyError:
            ids.append(self.itos.index(UNK))
    return ids


@variant("encode", "list(map(...)) over the characters")
def encode_with_map(self, text):
    if not isinstance(text, str):
        raise TypeError(f"expected str, got {type(text).__name__}")
    return list(map(lambda char: self.stoi.get(char, UNK_ID), text))


@variant("decode", "operator.index and an explicit bound check, pieces joined once")
def decode_with_index(self, ids):
    import operator

    size = len(self.itos)
    values = [operator.index(i) for i in ids]
    for value in values:
        if value < 0 or value >= size:
            raise ValueError(f"id {value} outside [0, {size})")
    return "".join([self.itos[value] for value in values])


@variant("decode", "string built up with +=, tensor elements through .item() when present")
def decode_concatenating(self, ids):
    text = ""
    for index in ids:
        index = index.item() if hasattr(index, "item") else index
        if index not in range(self.vocab_size):
            raise ValueError("id out of range")
        text += self.itos[index]
    return text


@variant("coverage", "a Counter: the counts of the characters the vocabulary holds, over the total")
def coverage_from_counts(itos, text):
    counts = Counter(text)
    held = sum(count for char, count in counts.items() if char in itos and char != UNK)
    return held / sum(counts.values())


@variant("coverage", "through Tokenizer.encode: the fraction of ids that are not <unk>")
def coverage_through_encode(itos, text):
    ids = Tokenizer(itos).encode(text)  # noqa: F821  (tokens.py's own class)
    return sum(1 for index in ids if index != UNK_ID) / len(ids)


@variant("unigram_cross_entropy", "a sum over the distinct evaluated ids, weighted by their counts")
def cross_entropy_by_types(train_ids, eval_ids, vocab_size, alpha=1.0):
    train_counts, eval_counts = Counter(train_ids), Counter(eval_ids)
    if any(train_counts[i] + alpha == 0 for i in eval_counts):
        return math.inf  # an evaluated id with probability 0 (alpha = 0, unseen in training): -ln 0
    denominator = math.log(len(train_ids) + alpha * vocab_size)
    total = sum(n * (denominator - math.log(train_counts[i] + alpha)) for i, n in eval_counts.items())
    return total / sum(eval_counts.values())


@variant("unigram_cross_entropy", "torch: a probability table, indexed by the evaluated ids, in float64")
def cross_entropy_with_torch(train_ids, eval_ids, vocab_size, alpha=1.0):
    import torch

    counts = torch.bincount(torch.tensor(train_ids, dtype=torch.int64), minlength=vocab_size).double()
    probabilities = (counts + alpha) / (counts.sum() + alpha * vocab_size)
    return float(-probabilities.log()[torch.tensor(eval_ids, dtype=torch.int64)].mean())

"""Known misconceptions of chapter 1, each written as a faulty exercise body.

One catalogue serves two purposes:
- diagnosis: when a student's outputs match a fault's outputs on the hidden cases, the
  feedback names that misconception;
- samples: `hero samples OUT` writes one faulty sample submission per fault (reference
  everywhere else), and the tests prove each one loses points exactly on its exercise.

Each function has the signature of the exercise it replaces and uses only names that
tokens.py itself has (math, Counter, UNK, UNK_ID).
"""

import math  # noqa: F401  (used by fault bodies)
from collections import Counter  # noqa: F401

from autograder.registry import catalogue

UNK, UNK_ID = "<unk>", 0  # as in tokens.py

CATALOGUE, fault = catalogue("fault")


# --- build_vocab -----------------------------------------------------------------------


@fault("build_vocab", "次数相同的字按首次出现的先后排了；约定是按 Unicode 码位从小到大排，这样同一段文本总得到同一个字表，与读入顺序无关。",
       "characters with equal counts are ordered by first appearance; the convention breaks ties by ascending "
       "Unicode code point, so the same text always gives the same vocabulary.")
def ties_by_first_appearance(text, max_size):
    return [UNK] + [char for char, _ in Counter(text).most_common(max_size - 1)]


@fault("build_vocab", "次数相同的字按码位从大到小排了；约定是从小到大。",
       "ties are broken by descending code point; the convention is ascending.")
def ties_by_reverse_code_point(text, max_size):
    counts = Counter(text)
    return [UNK] + sorted(counts, key=lambda char: (-counts[char], -ord(char)))[: max_size - 1]


@fault("build_vocab", "上限没有把 <unk> 算进去，字表多出一项；max_size 是整张表的大小，<unk> 占一个位置。",
       "the cap does not count <unk>, so the vocabulary has one entry too many; max_size is the size of the "
       "whole table and <unk> takes one slot.")
def cap_without_unk(text, max_size):
    counts = Counter(text)
    return [UNK] + sorted(counts, key=lambda char: (-counts[char], ord(char)))[:max_size]


@fault("build_vocab", "<unk> 放在了表尾；约定 id 0 是 <unk>，它必须是列表的第一项。",
       "<unk> is put last; by convention id 0 is <unk>, so it must be the list's first entry.")
def unk_last(text, max_size):
    counts = Counter(text)
    return sorted(counts, key=lambda char: (-counts[char], ord(char)))[: max_size - 1] + [UNK]


@fault("build_vocab", "字表按码位排序而没有按出现次数排（sorted(set(text))）；截断时应保留最常见的字，否则常用字会变成 <unk>。",
       "the vocabulary is sorted by code point, not by count (sorted(set(text))); a cap must keep the most "
       "frequent characters, otherwise common ones become <unk>.")
def sorted_by_code_point_only(text, max_size):
    return [UNK] + sorted(set(text))[: max_size - 1]


# --- encode --------------------------------------------------------------------------------


@fault("encode", "字表外的字被丢掉了；每个字都要有一个 id，字表外的字编码为 <unk>（id 0），否则序列长度和位置都会错。",
       "characters outside the vocabulary are dropped; every character gets an id, an unknown one is <unk> "
       "(id 0), otherwise the length and the positions of the sequence are wrong.")
def unknown_dropped(self, text):
    if not isinstance(text, str):
        raise TypeError("encode takes a str")
    return [self.stoi[char] for char in text if char in self.stoi]


@fault("encode", "遇到字表外的字抛出了 KeyError；这样的字应编码为 <unk>（id 0），而不是报错。",
       "a character outside the vocabulary raises KeyError; it must be encoded as <unk> (id 0) instead.")
def unknown_raises_key_error(self, text):
    if not isinstance(text, str):
        raise TypeError("encode takes a str")
    return [self.stoi[char] for char in text]


@fault("encode", "字表外的字给了一个新 id（V），超出了 [0, V)；它应编码为 <unk>，也就是 id 0。",
       "a character outside the vocabulary got a new id (V), outside [0, V); it must be <unk>, id 0.")
def unknown_as_vocab_size(self, text):
    if not isinstance(text, str):
        raise TypeError("encode takes a str")
    return [self.stoi.get(char, len(self.itos)) for char in text]


@fault("encode", "字被从 0 开始编号，忘了 id 0 留给 <unk>：字表里的字应取它在 itos 中的位置，第一个字是 id 1。",
       "the characters are numbered from 0, forgetting that id 0 is reserved for <unk>: a character's id is its "
       "position in itos, so the first character is id 1.")
def numbered_without_unk(self, text):
    if not isinstance(text, str):
        raise TypeError("encode takes a str")
    chars = {token: index for index, token in enumerate(token for token in self.itos if token != UNK)}
    return [chars.get(char, self.unk_id) for char in text]


@fault("encode", "输入不是 str 时没有抛 TypeError；一个字的列表碰巧也能逐字查表，但这会把调用方的错误藏起来。",
       "a non-str input does not raise TypeError; a list of characters happens to work character by character, "
       "which hides the caller's mistake.")
def no_type_check(self, text):
    return [self.stoi.get(char, self.unk_id) for char in text]


# --- decode --------------------------------------------------------------------------------


@fault("decode", "词元之间加了空格；字符级分词的 decode 应把词元直接首尾相连。",
       "spaces are put between tokens; a character-level decode joins the tokens with nothing in between.")
def joined_with_spaces(self, ids):
    pieces = []
    for index in ids:
        index = int(index)
        if not 0 <= index < len(self.itos):
            raise ValueError(f"id {index} out of range")
        pieces.append(self.itos[index])
    return " ".join(pieces)


@fault("decode", "负数 id 像 Python 列表下标那样从末尾倒着取了；id 必须在 [0, V) 内，-1 应抛 ValueError。",
       "a negative id wraps around like a Python list index; ids lie in [0, V), so -1 must raise ValueError.")
def negative_wraps(self, ids):
    pieces = []
    for index in ids:
        index = int(index)
        if index >= len(self.itos):
            raise ValueError(f"id {index} out of range")
        pieces.append(self.itos[index])
    return "".join(pieces)


@fault("decode", "没有检查 id 的范围：过大的 id 抛出的是 IndexError，负数 id 还会从末尾倒着取；应对 [0, V) 之外的 id 抛 ValueError。",
       "no range check: an id that is too large raises IndexError and a negative one wraps around; an id "
       "outside [0, V) must raise ValueError.")
def no_range_check(self, ids):
    return "".join(self.itos[int(index)] for index in ids)


@fault("decode", "跳过了 <unk>（id 0）；decode 应把它写成 '<unk>'，让人看得出这里有一个字表外的字。",
       "<unk> (id 0) is skipped; decode writes it as '<unk>', so a reader sees that a character was unknown.")
def unk_skipped(self, ids):
    pieces = []
    for index in ids:
        index = int(index)
        if not 0 <= index < len(self.itos):
            raise ValueError(f"id {index} out of range")
        if index != self.unk_id:
            pieces.append(self.itos[index])
    return "".join(pieces)


# --- coverage ---------------------------------------------------------------------------------


@fault("coverage", "按不同的字算了覆盖率；覆盖率按出现次数计（含重复）：常用字出现得多，权重也大。",
       "coverage was computed over distinct characters; it counts occurrences (repeats included): a frequent "
       "character weighs as often as it occurs.")
def coverage_over_distinct(itos, text):
    known = set(itos) - {UNK}
    distinct = set(text)
    return len(distinct & known) / len(distinct)


@fault("coverage", "返回了百分数；覆盖率是 0 到 1 之间的比例。",
       "a percentage was returned; coverage is a fraction between 0 and 1.")
def coverage_as_percentage(itos, text):
    known = set(itos) - {UNK}
    return 100 * sum(char in known for char in text) / len(text)


@fault("coverage", "把会变成 <unk> 的字也算作覆盖了（每个字都有 id，所以结果总是 1）；覆盖的是字表里真正有的字，<unk> 不算。",
       "characters that become <unk> were counted as covered (every character gets an id, so the result is "
       "always 1); only characters the vocabulary really holds are covered, <unk> is not.")
def coverage_counts_unk(itos, text):
    ids = [itos.index(char) if char in itos else UNK_ID for char in text]
    return sum(index >= 0 for index in ids) / len(ids)


# --- unigram_cross_entropy ----------------------------------------------------------------------


@fault("unigram_cross_entropy", "用了以 2 为底的对数（单位 bits）；本课程的损失都用自然对数，单位 nats（ln V 而不是 log2 V）。",
       "log base 2 was used (bits); the course measures every loss in nats with the natural log (ln V, not log2 V).")
def log_base_two(train_ids, eval_ids, vocab_size, alpha=1.0):
    counts = Counter(int(i) for i in train_ids)
    total = len(train_ids) + alpha * vocab_size
    return -sum(math.log2((counts.get(int(i), 0) + alpha) / total) for i in eval_ids) / len(eval_ids)


@fault("unigram_cross_entropy", "没有做平滑（忽略了 alpha）；训练中没出现过的 id 概率为 0，交叉熵会变成无穷大。",
       "no smoothing (alpha ignored); an id never seen in training gets probability 0 and the cross entropy "
       "becomes infinite.")
def no_smoothing(train_ids, eval_ids, vocab_size, alpha=1.0):
    counts = Counter(int(i) for i in train_ids)
    return -sum(math.log(counts.get(int(i), 0) / len(train_ids)) for i in eval_ids) / len(eval_ids)


@fault("unigram_cross_entropy", "分母漏了 alpha·V：每个 id 的次数都加了 alpha，总数就要加 alpha·V，否则概率之和大于 1。",
       "the denominator lacks alpha*V: alpha is added to every id's count, so the total grows by alpha*V; "
       "otherwise the probabilities sum to more than 1.")
def denominator_without_alpha_v(train_ids, eval_ids, vocab_size, alpha=1.0):
    counts = Counter(int(i) for i in train_ids)
    return -sum(math.log((counts.get(int(i), 0) + alpha) / len(train_ids)) for i in eval_ids) / len(eval_ids)


@fault("unigram_cross_entropy", "只在训练中出现过的 id 上做了平滑；约定是在整个字表（V 个 id）上加 alpha。",
       "smoothing covers only the ids seen in training; the convention adds alpha over the whole vocabulary "
       "(V ids).")
def smoothing_over_seen_ids(train_ids, eval_ids, vocab_size, alpha=1.0):
    counts = Counter(int(i) for i in train_ids)
    total = len(train_ids) + alpha * len(counts)
    return -sum(math.log((counts.get(int(i), 0) + alpha) / total) for i in eval_ids) / len(eval_ids)


@fault("unigram_cross_entropy", "对字表里的 V 个 id 求了平均，而不是对评估序列的词元求平均；交叉熵是每个词元的平均损失。",
       "the average is over the V ids of the vocabulary instead of over the evaluated tokens; cross entropy is "
       "the mean loss per token.")
def mean_over_vocabulary(train_ids, eval_ids, vocab_size, alpha=1.0):
    counts = Counter(int(i) for i in train_ids)
    total = len(train_ids) + alpha * vocab_size
    return -sum(math.log((counts.get(i, 0) + alpha) / total) for i in range(vocab_size)) / vocab_size

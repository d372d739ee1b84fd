"""The answer cells of chapter 1: what each asks, its expected value and the known mistakes its
feedback can name.

The notebook walks through one short poem (賜蕭瑀: counts, the vocabulary and its ids, the
coverage of small vocabularies), a tiny distribution's entropy and the corpus figures of seed
003, computed and asserted in given cells.  Each graded answer asks for the same calculation on
inputs the walkthrough does not use, so its value is written nowhere in the student's notebook
(tests/test_ch01_tokens.py proves it).  Expected values are computed here from the reference,
never typed in; a mistake's value is computed the way the mistake computes it (the fault
bodies of faults.py, where there is one).
"""

import math
from collections import Counter

from autograder.registry import Answer, Mistake

from . import faults


def _fault(ident):
    """A fault's body as a callable, by id (a fault written as a change has no name in faults.py)."""
    return next(entry for entry in faults.CATALOGUE if entry.id == ident).function

# --- the questions' inputs (the notebook states them in its own words) ----------------------

POEM = "枝條鬱鬱，文質彬彬。山林作伴，松桂爲鄰。\n"  # 上官昭容, one poem per line: four characters tie at count 2
POEM_CAP = 7  # poem_vocab
LINE_ITOS = ["<unk>", "，", "。", "\n", "山", "月", "風", "花", "春"]  # line_ids
LINE = "春風吹花落，明月照山。\n"
CURVE_CAPS = (2, 3, 4, 5, 6, 7, 8)  # coverage_curve: max_size 2..8 on POEM
TINY_COUNTS = (5, 2, 2, 1)  # tiny_entropy
TRAIN, HELDOUT, SMALL_V = (1, 1, 1, 2, 2, 3), (1, 2, 4), 5  # smoothed_unigram, alpha = 1


def _curve(m, vocab=None, measure=None):
    vocab = vocab or m.build_vocab
    measure = measure or m.coverage
    return [measure(vocab(POEM, cap), POEM) for cap in CURVE_CAPS]


def _entropy(counts, log=math.log):
    total = sum(counts)
    return -sum(c / total * log(c / total) for c in counts)


def _mean_over_symbols(counts):
    total = sum(counts)
    return -sum(math.log(c / total) for c in counts) / len(counts)


def _smoothed(denominator, log=math.log):
    counts = Counter(TRAIN)
    return -sum(log((counts[i] + 1) / denominator) for i in HELDOUT) / len(HELDOUT)


ANSWERS = (
    Answer("poem_vocab", "poem_vocab", "一首诗的字表（max_size=7）", "the vocabulary of one poem (max_size=7)",
           lambda m: m.build_vocab(POEM, POEM_CAP), exact=True, module="tokens",
           mistakes=(
               Mistake(lambda m: _fault("ties_by_first_appearance")(POEM, POEM_CAP),
                       "次数相同的字按首次出现的先后排了；约定按 Unicode 码位从小到大排。请重查同为 2 次的那几个字的顺序。",
                       "ties are ordered by first appearance; the convention is ascending Unicode code point: "
                       "recheck the order of the characters that occur twice."),
               Mistake(lambda m: _fault("cap_without_unk")(POEM, POEM_CAP),
                       "字表多了一项：max_size 把 <unk> 也算在内。请重数列表的长度。",
                       "one entry too many: max_size counts <unk> too. Recount the list."),
               Mistake(lambda m: _fault("sorted_by_code_point_only")(POEM, POEM_CAP),
                       "这是只按码位排序的结果；应先按出现次数从多到少排，次数相同才看码位。",
                       "this is sorted by code point alone; rank by descending count first, code point only "
                       "breaks ties."),
           )),
    Answer("line_ids", "line_ids", "一行诗的 id", "the ids of one line",
           lambda m: m.Tokenizer(LINE_ITOS).encode(LINE), exact=True, module="tokens",
           mistakes=(
               Mistake(lambda m: [LINE_ITOS.index(c) for c in LINE if c in LINE_ITOS],
                       "字表外的字被丢掉了；每个字都要有一个 id，字表外的字记作 <unk> 的 id 0。",
                       "characters outside the vocabulary were dropped; every character gets an id, an unknown one "
                       "is <unk>, id 0."),
               Mistake(lambda m: [LINE_ITOS.index(c) if c in LINE_ITOS else len(LINE_ITOS) for c in LINE],
                       "字表外的字给了新 id V；它们应记作 <unk>，也就是 id 0。",
                       "unknown characters got a new id V; they are <unk>, id 0."),
           )),
    Answer("coverage_curve", "coverage_curve", "覆盖率随字表上限的变化（max_size = 2…8）",
           "coverage as the cap grows (max_size = 2..8)",
           lambda m: _curve(m), module="tokens",
           mistakes=(
               Mistake(lambda m: _curve(m, vocab=_fault("cap_without_unk")),
                       "整条曲线错开了一格：max_size 把 <unk> 也算在内，上限为 k 时只有 k-1 个字。",
                       "the whole curve is one step off: max_size counts <unk>, so a cap of k holds k-1 characters."),
               Mistake(lambda m: _curve(m, measure=_fault("coverage_over_distinct")),
                       "这是按不同的字算的覆盖率；应按出现次数（含重复）计。",
                       "this counts distinct characters; coverage counts occurrences, repeats included."),
               Mistake(lambda m: [100 * value for value in _curve(m)],
                       "这是百分数；覆盖率写成 0 到 1 之间的比例。",
                       "these are percentages; write coverage as a fraction between 0 and 1."),
           )),
    Answer("tiny_entropy", "tiny_entropy", "次数 (5, 2, 2, 1) 的熵（nats）", "the entropy of counts (5, 2, 2, 1) in nats",
           lambda m: m.unigram_cross_entropy([0] * 5 + [1] * 2 + [2] * 2 + [3], [0] * 5 + [1] * 2 + [2] * 2 + [3], 4,
                                             alpha=0.0),
           module="tokens",
           mistakes=(
               Mistake(lambda m: _entropy(TINY_COUNTS, log=math.log2),
                       "这是以 2 为底的结果（bits）；本课程用自然对数，单位 nats。",
                       "this is in bits (log base 2); the course uses the natural log, nats."),
               Mistake(lambda m: _mean_over_symbols(TINY_COUNTS),
                       "这是对 4 个符号的 -ln p 做了简单平均；熵要按概率加权，-Σ p·ln p。",
                       "this averages -ln p over the 4 symbols; entropy weights each by its probability, "
                       "-sum p ln p."),
           )),
    Answer("smoothed_unigram", "smoothed_unigram", "加一平滑的字频交叉熵", "the add-one unigram cross entropy",
           lambda m: m.unigram_cross_entropy(list(TRAIN), list(HELDOUT), SMALL_V, alpha=1.0), module="tokens",
           mistakes=(
               Mistake(lambda m: _smoothed(len(TRAIN)),
                       "分母漏了 alpha·V：每个 id 的次数都加了 1，总数也要加 V。",
                       "the denominator lacks alpha*V: 1 is added to each id's count, so V is added to the total."),
               Mistake(lambda m: _smoothed(len(TRAIN) + len(set(TRAIN))),
                       "只在训练里出现过的 id 上加了 1；平滑覆盖整个字表的 V 个 id。",
                       "1 was added only for the ids seen in training; smoothing covers all V ids of the vocabulary."),
               Mistake(lambda m: _smoothed(len(TRAIN) + SMALL_V, log=math.log2),
                       "这是以 2 为底的结果（bits）；请用自然对数。",
                       "this is in bits (log base 2); use the natural log."),
           )),
)

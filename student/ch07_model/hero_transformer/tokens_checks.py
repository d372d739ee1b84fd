"""Visible checks of chapter 1 (hero_transformer/tokens.py): properties you can test on your own code.

Each ``judge_*`` function looks at inputs and outputs only and returns ``None`` when the property
holds, or a ``(中文, English)`` pair that says what is wrong.  The ``check_*`` functions run your
code on small inputs, apply the judges and raise ``AssertionError`` with the message.  A stub is
not an error: the check says so in one line on stderr and returns, so Run All goes on.  The
autograder applies the same judges to the outputs of your code in its own process.
"""

import math
from collections import Counter

from .checks import _passed, _raise_if, show_tracebacks, visible_check  # noqa: F401

UNK = "<unk>"


def _problem(zh, en):
    return (zh, en)


# --- build_vocab ------------------------------------------------------------------------


def judge_unk_first(itos):
    if not isinstance(itos, (list, tuple)) or not itos:
        return _problem(f"build_vocab 应返回一个非空列表，实际返回了 {type(itos).__name__}。",
                        f"build_vocab must return a non-empty list, got {type(itos).__name__}.")
    if itos[0] != UNK:
        return _problem("id 0 应是保留的未知字 <unk>：列表的第一项必须是 '<unk>'。",
                        "id 0 is the reserved unknown token: the list's first entry must be '<unk>'.")
    return None


def judge_vocab_size(text, max_size, itos):
    """The cap counts <unk>: min(max_size, distinct characters + 1) entries."""
    wanted = min(max_size, len(set(text)) + 1)
    if len(itos) != wanted:
        return _problem(
            f"字表有 {len(itos)} 项；上限 max_size={max_size} 把 <unk> 也算在内，"
            f"所以应有 min(max_size, 不同字数 + 1) 项。",
            f"the vocabulary has {len(itos)} entries; the cap max_size={max_size} counts <unk> too, so it holds "
            "min(max_size, distinct characters + 1) entries.")
    return None


def judge_vocab_ranked(text, itos):
    """After <unk>: distinct characters of the text, by descending count, ties by code point,
    and none left out that outranks one kept."""
    counts = Counter(text)
    chars = list(itos[1:])
    if any(not isinstance(c, str) or c not in counts for c in chars) or len(set(chars)) != len(chars):
        return _problem("<unk> 之后的每一项都应是文本里出现过的一个字，且不重复。",
                        "every entry after <unk> must be a distinct character of the text.")
    ranked = sorted(counts, key=lambda c: (-counts[c], ord(c)))
    kept = ranked[:len(chars)]
    missing = [c for c in kept if c not in chars]
    if missing:  # what was observed: a character that outranks one of yours is not there
        extra = next(c for c in reversed(chars) if c not in kept)
        return _problem(f"你的字表缺少 {missing[0]!r}（在文本中出现 {counts[missing[0]]} 次），却收了 {extra!r}"
                        f"（{counts[extra]} 次）：按次数从多到少、同次数按码位从小到大，{missing[0]!r} 排在前面。",
                        f"your vocabulary lacks {missing[0]!r} ({counts[missing[0]]} times in the text) but holds "
                        f"{extra!r} ({counts[extra]} times): by descending count, ties by ascending code point, "
                        f"{missing[0]!r} ranks first.")
    if chars != kept:  # the same characters, another order: say where it first differs
        index = next(i for i, (a, b) in enumerate(zip(chars, kept)) if a != b)
        yours, due = chars[index], kept[index]
        return _problem(f"字的顺序不对：你的 id {index + 1} 是 {yours!r}（{counts[yours]} 次，码位 U+{ord(yours):04X}），"
                        f"而 {due!r}（{counts[due]} 次，码位 U+{ord(due):04X}）应排在它前面：按出现次数从多到少，"
                        "次数相同时按 Unicode 码位从小到大。",
                        f"the order is wrong: your id {index + 1} is {yours!r} ({counts[yours]} times, code point "
                        f"U+{ord(yours):04X}), but {due!r} ({counts[due]} times, U+{ord(due):04X}) ranks before it: "
                        "by descending count, ties by ascending Unicode code point.")
    return None


# --- encode -----------------------------------------------------------------------------


def judge_one_id_per_char(text, ids):
    if not isinstance(ids, list) or not all(type(i) is int for i in ids):
        return _problem(f"encode 应返回 int 组成的列表，实际返回了 {type(ids).__name__}。",
                        f"encode must return a list of int, got {type(ids).__name__}.")
    if len(ids) != len(text):
        return _problem(f"文本有 {len(text)} 个字，encode 却给出 {len(ids)} 个 id：每个字恰好一个 id，"
                        "字表外的字也不能丢掉，而是记作 <unk>。",
                        f"the text has {len(text)} characters but encode gave {len(ids)} ids: one id per character; "
                        "a character outside the vocabulary is not dropped but becomes <unk>.")
    return None


def judge_ids_in_range(ids, vocab_size):
    bad = [i for i in ids if not 0 <= i < vocab_size]
    if bad:
        return _problem(f"id {bad[0]} 不在 [0, V) = [0, {vocab_size}) 内；字表外的字应编码为 <unk> 的 id 0。",
                        f"id {bad[0]} is outside [0, V) = [0, {vocab_size}); a character outside the vocabulary "
                        "is encoded as <unk>, id 0.")
    return None


def judge_ids_match(itos, text, ids):
    stoi = {token: index for index, token in enumerate(itos)}
    for position, (char, index) in enumerate(zip(text, ids)):
        if index != stoi.get(char, 0):
            return _problem(f"第 {position} 个字 {char!r} 的 id 不对：字表里的字取它在列表中的位置，其余的字取 0（<unk>）。",
                            f"the id of character {position} ({char!r}) is wrong: a character of the vocabulary "
                            "gets its position in the list, any other gets 0 (<unk>).")
    return None


# --- decode -----------------------------------------------------------------------------


def judge_decoded(itos, ids, text):
    if not isinstance(text, str):
        return _problem(f"decode 应返回 str，实际返回了 {type(text).__name__}。",
                        f"decode must return a str, got {type(text).__name__}.")
    if len(text) != sum(len(itos[int(i)]) for i in ids):
        return _problem("decode 的结果长度不对：每个 id 换成它的词元（<unk> 写作 '<unk>'），直接首尾相连，"
                        "中间不加空格，也不跳过任何 id。",
                        "the decoded text has the wrong length: each id becomes its token ('<unk>' for id 0), "
                        "joined with nothing in between and none skipped.")
    if text != "".join(itos[int(i)] for i in ids):
        return _problem("decode 的结果与逐个查表拼接的文本不同。",
                        "the decoded text is not the tokens of the ids, looked up one by one and joined.")
    return None


# --- coverage ---------------------------------------------------------------------------


def judge_fraction(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
        return _problem(f"覆盖率应是 0 到 1 之间的比例（不是百分数，也不是个数），实际得到 {value!r}。",
                        f"coverage is a fraction between 0 and 1 (not a percentage, not a count); got {value!r}.")
    return None


def judge_coverage(itos, text, value):
    known = set(itos) - {UNK}
    expected = sum(char in known for char in text) / len(text)
    if abs(value - expected) > 1e-12:
        return _problem("覆盖率是文本中（按出现次数、含重复）落在字表里的字所占的比例；"
                        "不是不同字的比例，<unk> 本身也不算覆盖。",
                        "coverage is the fraction of the text's characters (occurrences, repeats counted) that the "
                        "vocabulary holds; not the fraction of distinct characters, and <unk> covers nothing.")
    return None


# --- unigram cross entropy ----------------------------------------------------------------


def own_entropy(ids):
    """The entropy in nats of a sequence's own id frequencies."""
    counts, n = Counter(ids), len(ids)
    return -sum(c / n * math.log(c / n) for c in counts.values())


def judge_uniform_baseline(value, vocab_size):
    """Training ids that hold every id once give p = 1/V for each id: ln V nats, any alpha."""
    if abs(value - math.log(vocab_size)) > 1e-9 * max(1.0, math.log(vocab_size)):
        return _problem(f"训练 id 恰好各出现一次时，每个 id 的概率都是 1/V，交叉熵应为 ln V = ln {vocab_size}"
                        "（自然对数，单位 nats；log2 给出的是 bits）。",
                        f"when the training ids hold each id exactly once every id has probability 1/V and the "
                        f"cross entropy is ln V = ln {vocab_size} (natural log, nats; log2 gives bits).")
    return None


def judge_gibbs(eval_ids, value):
    """Any probability distribution over the ids (smoothing included) costs at least the
    evaluated text's own entropy (Gibbs' inequality)."""
    if value < own_entropy(eval_ids) - 1e-9:
        return _problem("交叉熵低于被评估文本自身字频的熵，这对任何概率分布都不可能（吉布斯不等式）："
                        "平滑后的概率之和要等于 1，分母应为 N + alpha·V。",
                        "the cross entropy is below the evaluated text's own entropy, which no probability "
                        "distribution can achieve (Gibbs' inequality): smoothed probabilities must sum to 1, so the "
                        "denominator is N + alpha*V.")
    return None


def judge_sums_to_one(per_id):
    """per_id[i] is the cross entropy of the one-token sequence [i]: exp(-per_id[i]) is the
    probability the model gives id i, and over the whole vocabulary these sum to 1."""
    total = sum(math.exp(-value) for value in per_id)
    if abs(total - 1.0) > 1e-9:
        return _problem(f"把每个 id 单独评估，exp(-交叉熵) 就是它的概率；这 V 个概率之和应为 1，实际是 {total:.4g}。"
                        "检查分母是否为 N + alpha·V（平滑覆盖全部 V 个 id），以及是否用了自然对数。",
                        f"evaluating each id alone, exp(-cross entropy) is its probability; over the V ids these must "
                        f"sum to 1, yours sum to {total:.4g}. Check that the denominator is N + alpha*V (smoothing "
                        "covers all V ids) and that the log is natural.")
    return None


WORKED_EXAMPLE = (math.log(7 / 3) + math.log(7)) / 2  # the walkthrough's: train (1, 1, 2), V = 4, alpha = 1, eval (1, 3)


def judge_worked_example(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or abs(value - WORKED_EXAMPLE) > 1e-9:
        return _problem(f"讲解里的例子（训练 id (1, 1, 2)，V = 4，alpha = 1，评估 (1, 3)）应得 (ln 7/3 + ln 7)/2 ≈ 1.3966 "
                        f"nats，你的函数给出 {value!r}：q(i) = (count(i) + alpha)/(N + alpha·V)，这里分母是 3 + 1·4 = 7；"
                        "结果是按评估词元取平均的浮点数。",
                        f"the walkthrough's example (train ids (1, 1, 2), V = 4, alpha = 1, evaluated (1, 3)) gives "
                        f"(ln 7/3 + ln 7)/2 = 1.3966 nats; yours gives {value!r}: q(i) = (count(i) + alpha)/(N + "
                        "alpha*V), here a denominator of 3 + 1*4 = 7, averaged over the evaluated tokens, a float.")
    return None


# --- checks you run in the notebook ---------------------------------------------------------


def _tokens():
    from . import tokens

    return tokens


SAMPLE = "白日依山盡，黃河入海流。\n欲窮千里目，更上一層樓。\n"  # 王之渙《登鸛雀樓》, not in the notebook's tables
# ties by code point past U+FFFF: 𠀀 (U+20000) comes after ， (U+FF0C), though UTF-16 puts it first
BEYOND_THE_BMP = "𠀀，山" * 3 + "月"
OTHER_SAMPLE = "春眠不覺曉，處處聞啼鳥。\n夜來風雨聲，花落知多少。\n"  # 孟浩然《春曉》: another text, other counts


@visible_check("build_vocab", module="tokens", target="build_vocab")
def check_build_vocab():
    tokens = _tokens()
    # two texts under each cap: each vocabulary must be its own text's, whatever was asked before
    for max_size in (1, 4, 8, 100):
        for text in (SAMPLE, OTHER_SAMPLE, BEYOND_THE_BMP):
            itos = tokens.build_vocab(text, max_size)
            _raise_if(judge_unk_first(itos))
            _raise_if(judge_vocab_size(text, max_size, itos))
            _raise_if(judge_vocab_ranked(text, itos))
    _passed("build_vocab：<unk> 是 id 0，上限含 <unk>，按次数降序、同次数按码位")


@visible_check("encode", module="tokens", target="Tokenizer.encode")
def check_encode():
    tokens = _tokens()
    itos = [UNK, "，", "。", "\n", "山", "日", "白", "河"]
    # the same texts through a second tokenizer with another vocabulary: each gives its own ids
    for vocabulary in (itos, [UNK] + list(reversed(itos[1:]))):
        tokenizer = tokens.Tokenizer(vocabulary)
        for text in ("白日山，山河。\n", SAMPLE, ""):
            ids = tokenizer.encode(text)
            _raise_if(judge_one_id_per_char(text, ids))
            _raise_if(judge_ids_in_range(ids, len(vocabulary)))
            _raise_if(judge_ids_match(vocabulary, text, ids))
    # "<unk>" in a text is five characters, each its own id; encode only reads the vocabulary
    table = dict(tokenizer.stoi)
    ids = tokenizer.encode("山<unk>河")
    _raise_if(judge_one_id_per_char("山<unk>河", ids))
    _raise_if(judge_ids_match(tokenizer.itos, "山<unk>河", ids))
    if tokenizer.stoi != table:
        raise AssertionError(f"encode 改动了 tokenizer.stoi（调用前 {len(table)} 项，之后 {len(tokenizer.stoi)} 项）："
                             "encode 只读词表，不往里添东西。\n"
                             f"(encode changed tokenizer.stoi ({len(table)} entries before the call, "
                             f"{len(tokenizer.stoi)} after): encode reads the vocabulary and adds nothing to it.)")
    for not_a_str in (list("白日"), tuple("白日"), {"白": 1, "日": 2}, "白日".encode()):
        try:
            tokenizer.encode(not_a_str)
        except TypeError:
            continue
        raise AssertionError(f"encode 收到的不是 str（这里是 {type(not_a_str).__name__}）时应抛出 TypeError；"
                             "字的序列碰巧也能逐字查表，但那会把 bug 藏起来。\n"
                             f"(encode must raise TypeError for anything that is not a str; here a "
                             f"{type(not_a_str).__name__}.)")
    _passed("encode：每字一个 id，字表外的字为 0，非 str 抛 TypeError")


@visible_check("decode", module="tokens", target="Tokenizer.decode")
def check_decode():
    tokens = _tokens()
    itos = [UNK, "，", "。", "\n", "山", "日", "白", "河"]
    tokenizer = tokens.Tokenizer(itos)
    import torch

    for ids in ([6, 5, 4, 1, 7, 2, 3], [0, 4, 0], []):
        _raise_if(judge_decoded(itos, ids, tokenizer.decode(ids)))
        _raise_if(judge_decoded(itos, ids, tokenizer.decode(torch.tensor(ids, dtype=torch.int64))))  # [] as well
    for bad in ([4, -1], [4, len(itos)], torch.tensor([4, -1]), torch.tensor([4, len(itos)])):
        try:
            tokenizer.decode(bad)
        except ValueError:
            continue
        raise AssertionError(f"decode({bad!r}) 应抛出 ValueError：id 必须在 [0, V) 内（列表与张量都一样）；"
                             "负数 id 不能像 Python 列表那样从末尾倒着取。\n"
                             f"(decode({bad!r}) must raise ValueError: ids lie in [0, V), in a list or a tensor; a "
                             "negative id must not wrap around like a Python list index.)")
    _passed("decode：逐个查表直接拼接，id 越界（含负数）抛 ValueError")


@visible_check("coverage", module="tokens", target="coverage")
def check_coverage():
    tokens = _tokens()
    # the last text holds a written "<unk>": five characters that are not in the vocabulary
    for text in (SAMPLE, "山<unk>海"):
        for itos in ([UNK], [UNK, "，", "。"], [UNK, "，", "山", "海", "雲"], [UNK] + sorted(set(SAMPLE))):
            value = tokens.coverage(itos, text)
            _raise_if(judge_fraction(value))
            _raise_if(judge_coverage(itos, text, value))
    _passed("coverage：按出现次数计的比例，在 0 与 1 之间")


@visible_check("unigram_cross_entropy", module="tokens", target="unigram_cross_entropy")
def check_unigram_cross_entropy():
    tokens = _tokens()
    ids = [1, 2, 2, 3, 3, 3]
    # first the property that names the denominator: N + alpha (not N + alpha*V) fails it, and so does
    # smoothing over the seen ids only; then the walkthrough's own example, worked out in the text
    _raise_if(judge_sums_to_one([tokens.unigram_cross_entropy(ids, [i], 7, alpha=1.0) for i in range(7)]))
    _raise_if(judge_worked_example(tokens.unigram_cross_entropy([1, 1, 2], [1, 3], 4, alpha=1.0)))
    _raise_if(judge_uniform_baseline(tokens.unigram_cross_entropy(list(range(6)), [0, 3, 3], 6, alpha=0.5), 6))
    in_sample = tokens.unigram_cross_entropy(ids, ids, 5, alpha=0.0)
    if abs(in_sample - own_entropy(ids)) > 1e-9:
        raise AssertionError("alpha=0 且评估集就是训练集时，结果应等于字频自身的熵 -Σ p·ln p（按词元平均，不是按字表平均）。\n"
                             "(with alpha=0 on the training ids themselves the result is the entropy of their "
                             "frequencies, averaged over tokens, not over the vocabulary.)")
    for train, evaluated, V, alpha in ((ids, ids, 5, 1.0), (ids, [0, 4, 3], 5, 1.0), (ids, [4], 9, 0.25)):
        _raise_if(judge_gibbs(evaluated, tokens.unigram_cross_entropy(train, evaluated, V, alpha=alpha)))
    train, evaluated = [3, 1, 2, 3], [4, 0, 3, 1]
    value = tokens.unigram_cross_entropy(train, evaluated, 5, alpha=1.0)
    if (train, evaluated) != ([3, 1, 2, 3], [4, 0, 3, 1]) or type(value) is not float:
        raise AssertionError("unigram_cross_entropy 只读传给它的两个列表（不排序、不改动），返回 Python 的 float。\n"
                             "(unigram_cross_entropy only reads the two lists it is given (no sorting, no edits) and "
                             f"returns a Python float; after the call they were {train} and {evaluated}, and the "
                             f"result a {type(value).__name__}.)")
    # an average over tokens: the same text evaluated 2,000 times over gives the same value, however long
    short = tokens.unigram_cross_entropy(ids, [1, 2, 3], 5, alpha=1.0)
    repeated = tokens.unigram_cross_entropy(ids, [1, 2, 3] * 2000, 5, alpha=1.0)
    if not (math.isfinite(repeated) and abs(repeated - short) <= 1e-9 * max(1.0, abs(short))):
        raise AssertionError(f"交叉熵是按词元的平均：把评估文本重复 2000 遍，结果不应改变；你的结果从 {short!r} 变成了 "
                             f"{repeated!r}。（例如几千个概率先相乘，乘积会下溢成 0。）\n"
                             f"(the cross entropy is an average over tokens: the evaluated text repeated 2,000 times "
                             f"gives the same value; yours went from {short!r} to {repeated!r}. Multiplying thousands "
                             f"of probabilities first, for one, underflows to 0.)")
    try:
        unseen = tokens.unigram_cross_entropy([1, 1, 2], [1, 3], 4, alpha=0.0)
    except (ArithmeticError, ValueError) as exc:
        unseen = exc
    if unseen != math.inf:
        raise AssertionError(f"alpha=0 时，评估集里有训练中没出现过的 id，它的概率是 0，-ln 0 = inf：结果应为 math.inf，"
                             f"你的结果是 {unseen!r}。\n"
                             f"(with alpha=0 an evaluated id never seen in training has probability 0 and -ln 0 = inf: "
                             f"the result should be math.inf; yours is {unseen!r}.)")
    _passed("unigram_cross_entropy：讲解的例子 1.3966，均匀时为 ln V，alpha=0 自评为熵，未见过的 id 给出 inf，V 个 id 的概率之和为 1，"
            "不低于评估文本自身的熵，评估文本重复多遍不变")

"""Known misconceptions of chapter 1, each written as a faulty exercise body.

One catalogue serves two purposes:
- diagnosis: when a student's outputs match a fault's outputs on the hidden cases, the
  feedback names that misconception;
- samples: `hero samples OUT` writes one faulty sample submission per fault (reference
  everywhere else), and the tests prove each one loses points exactly on its exercise.

Most faults are the reference body with a line or two changed (`fault.change`); the few
written whole compute something else altogether, with only names that tokens.py itself has
(math, Counter, UNK, UNK_ID).
"""

from autograder.registry import catalogue

UNK_ID = 0  # as in tokens.py (the one name a whole-function fault below uses)

CATALOGUE, fault = catalogue("fault")

# the reference's lines that several faults edit
RANKED = "ranked = sorted(frequencies, key=lambda char: (-frequencies[char], ord(char)))"
ENCODED = "return [self.stoi.get(char, self.unk_id) for char in text]"
TYPE_CHECK = ('if not isinstance(text, str):\n'
              '    raise TypeError(f"encode 需要 str，收到 {type(text).__name__} (encode takes a str)")\n')
IN_RANGE = "if not 0 <= index < len(self.itos):"
RANGE_CHECK = ('    if not 0 <= index < len(self.itos):\n'
               '        raise ValueError(f"id {index} 不在词表范围 [0, {len(self.itos)}) 内 (id out of range)")\n')
COVERED = "return sum(char in known for char in text) / len(text)"
TOTAL = "total = len(train_ids) + alpha * vocab_size"
ZERO_GUARD = "    if count == 0:\n        return math.inf\n"


# --- build_vocab -----------------------------------------------------------------------


fault.change("build_vocab", "ties_by_first_appearance",
             "次数相同的字按首次出现的先后排了；约定是按 Unicode 码位从小到大排，这样同一段文本总得到同一个字表，与读入顺序无关。",
             "characters with equal counts are ordered by first appearance; the convention breaks ties by ascending "
             "Unicode code point, so the same text always gives the same vocabulary.",
             (RANKED, "ranked = [char for char, _ in frequencies.most_common()]"))

fault.change("build_vocab", "ties_by_reverse_code_point", "次数相同的字按码位从大到小排了；约定是从小到大。",
             "ties are broken by descending code point; the convention is ascending.",
             ("ord(char))", "-ord(char))"))

fault.change("build_vocab", "ties_by_utf16",
             "次数相同的字按 UTF-16 编码排序：基本平面（U+FFFF）以内与码位顺序一致，但之外的字（如扩展 B 区的 𠀀）"
             "会排到 U+D800 之后的字前面。约定是按 Unicode 码位（ord）。",
             "ties are broken by UTF-16 encoding: within the basic plane (up to U+FFFF) that is code point order, "
             "but a character beyond it (extension B's 𠀀, say) sorts before the characters from U+D800 on. The "
             "convention is the Unicode code point (ord).",
             (RANKED, 'ranked = sorted(frequencies, key=lambda char: (-frequencies[char], char.encode("utf-16-be")))'))

fault.change("build_vocab", "cap_without_unk",
             "上限没有把 <unk> 算进去，字表多出一项；max_size 是整张表的大小，<unk> 占一个位置。",
             "the cap does not count <unk>, so the vocabulary has one entry too many; max_size is the size of the "
             "whole table and <unk> takes one slot.",
             ("ranked[: max_size - 1]", "ranked[:max_size]"))

fault.change("build_vocab", "unk_last", "<unk> 放在了表尾；约定 id 0 是 <unk>，它必须是列表的第一项。",
             "<unk> is put last; by convention id 0 is <unk>, so it must be the list's first entry.",
             ("return [UNK] + ranked[: max_size - 1]", "return ranked[: max_size - 1] + [UNK]"))

fault.change("build_vocab", "sorted_by_code_point_only",
             "字表按码位排序而没有按出现次数排（sorted(set(text))）；截断时应保留最常见的字，否则常用字会变成 <unk>。",
             "the vocabulary is sorted by code point, not by count (sorted(set(text))); a cap must keep the most "
             "frequent characters, otherwise common ones become <unk>.",
             (RANKED, "ranked = sorted(frequencies)"))


fault.change("build_vocab", "cached_by_cap",
             "字表按 max_size 缓存在函数之外：同一个上限、另一段文本，拿到的还是上一段文本的字表。字表只由这次传入的"
             "文本决定；不要在调用之间保存结果。",
             "the vocabulary is cached outside the function by max_size: the same cap with another text gets the "
             "earlier text's vocabulary. A vocabulary depends on the text passed in; keep no result between calls.",
             ("frequencies = Counter(text)",
              "global VOCABULARIES  # a module-level cache\n"
              "try:\n"
              "    cache = VOCABULARIES\n"
              "except NameError:\n"
              "    cache = VOCABULARIES = {}\n"
              "if max_size in cache:\n"
              "    return cache[max_size]\n"
              "frequencies = Counter(text)"),
             ("return [UNK] + ranked[: max_size - 1]",
              "cache[max_size] = [UNK] + ranked[: max_size - 1]\nreturn cache[max_size]"))


# --- encode --------------------------------------------------------------------------------


fault.change("encode", "unknown_dropped",
             "字表外的字被丢掉了；每个字都要有一个 id，字表外的字编码为 <unk>（id 0），否则序列长度和位置都会错。",
             "characters outside the vocabulary are dropped; every character gets an id, an unknown one is <unk> "
             "(id 0), otherwise the length and the positions of the sequence are wrong.",
             (ENCODED, "return [self.stoi[char] for char in text if char in self.stoi]"))

fault.change("encode", "unknown_raises_key_error", "遇到字表外的字抛出了 KeyError；这样的字应编码为 <unk>（id 0），而不是报错。",
             "a character outside the vocabulary raises KeyError; it must be encoded as <unk> (id 0) instead.",
             (ENCODED, "return [self.stoi[char] for char in text]"))

fault.change("encode", "unknown_as_vocab_size", "字表外的字给了一个新 id（V），超出了 [0, V)；它应编码为 <unk>，也就是 id 0。",
             "a character outside the vocabulary got a new id (V), outside [0, V); it must be <unk>, id 0.",
             ("self.stoi.get(char, self.unk_id)", "self.stoi.get(char, len(self.itos))"))

fault.change("encode", "numbered_without_unk",
             "字被从 0 开始编号，忘了 id 0 留给 <unk>：字表里的字应取它在 itos 中的位置，第一个字是 id 1。",
             "the characters are numbered from 0, forgetting that id 0 is reserved for <unk>: a character's id is its "
             "position in itos, so the first character is id 1.",
             (ENCODED, "chars = {token: index for index, token in\n"
                       "         enumerate(token for token in self.itos if token != UNK)}\n"
                       "return [chars.get(char, self.unk_id) for char in text]"))

fault.change("encode", "no_type_check",
             "输入不是 str 时没有抛 TypeError；一个字的列表碰巧也能逐字查表，但这会把调用方的错误藏起来。",
             "a non-str input does not raise TypeError; a list of characters happens to work character by character, "
             "which hides the caller's mistake.",
             (TYPE_CHECK, ""))


fault.change("encode", "memo_shared_by_tokenizers",
             "编码结果按文本缓存在模块里，所有 Tokenizer 共用：同一段文本换一个字表，拿到的还是另一个字表给的 id。"
             "id 只由这个 tokenizer 自己的字表决定。",
             "the ids are cached by text in the module, shared by every Tokenizer: the same text with another "
             "vocabulary gets the ids another vocabulary gave. The ids depend on this tokenizer's own vocabulary.",
             (ENCODED, "global ENCODED_TEXTS  # a module-level memo, the same for every Tokenizer\n"
                       "try:\n"
                       "    memo = ENCODED_TEXTS\n"
                       "except NameError:\n"
                       "    memo = ENCODED_TEXTS = {}\n"
                       "if text not in memo:\n"
                       "    memo[text] = [self.stoi.get(char, self.unk_id) for char in text]\n"
                       "return list(memo[text])"))

fault.change("encode", "only_lists_refused",
             "只有列表会抛 TypeError，元组等其他非 str 输入照样逐字查表；规则是凡不是 str 都抛 TypeError。",
             "only a list raises TypeError; a tuple or any other non-str is still looked up character by character; "
             "the rule is TypeError for anything that is not a str.",
             ("if not isinstance(text, str):", "if isinstance(text, list):"))


# --- decode --------------------------------------------------------------------------------


fault.change("decode", "joined_with_spaces", "词元之间加了空格；字符级分词的 decode 应把词元直接首尾相连。",
             "spaces are put between tokens; a character-level decode joins the tokens with nothing in between.",
             ('return "".join(pieces)', 'return " ".join(pieces)'))

fault.change("decode", "negative_wraps",
             "负数 id 像 Python 列表下标那样从末尾倒着取了；id 必须在 [0, V) 内，-1 应抛 ValueError。",
             "a negative id wraps around like a Python list index; ids lie in [0, V), so -1 must raise ValueError.",
             (IN_RANGE, "if index >= len(self.itos):"))

fault.change("decode", "no_range_check",
             "没有检查 id 的范围：过大的 id 抛出的是 IndexError，负数 id 还会从末尾倒着取；应对 [0, V) 之外的 id 抛 ValueError。",
             "no range check: an id that is too large raises IndexError and a negative one wraps around; an id "
             "outside [0, V) must raise ValueError.",
             (RANGE_CHECK, ""))

fault.change("decode", "unk_skipped", "跳过了 <unk>（id 0）；decode 应把它写成 '<unk>'，让人看得出这里有一个字表外的字。",
             "<unk> (id 0) is skipped; decode writes it as '<unk>', so a reader sees that a character was unknown.",
             ("    pieces.append(self.itos[index])",
              "    if index != self.unk_id:\n        pieces.append(self.itos[index])"))


# --- coverage ---------------------------------------------------------------------------------


fault.change("coverage", "coverage_over_distinct",
             "按不同的字算了覆盖率；覆盖率按出现次数计（含重复）：常用字出现得多，权重也大。",
             "coverage was computed over distinct characters; it counts occurrences (repeats included): a frequent "
             "character weighs as often as it occurs.",
             (COVERED, "return len(set(text) & known) / len(set(text))"))

fault.change("coverage", "coverage_as_percentage", "返回了百分数；覆盖率是 0 到 1 之间的比例。",
             "a percentage was returned; coverage is a fraction between 0 and 1.",
             (COVERED, "return 100 * sum(char in known for char in text) / len(text)"))


@fault("coverage", "把会变成 <unk> 的字也算作覆盖了（每个字都有 id，所以结果总是 1）；覆盖的是字表里真正有的字，<unk> 不算。",
       "characters that become <unk> were counted as covered (every character gets an id, so the result is "
       "always 1); only characters the vocabulary really holds are covered, <unk> is not.")
def coverage_counts_unk(itos, text):
    # written whole: it encodes first and counts ids, an algorithm the reference does not have
    ids = [itos.index(char) if char in itos else UNK_ID for char in text]
    return sum(index >= 0 for index in ids) / len(ids)


# --- unigram_cross_entropy ----------------------------------------------------------------------


fault.change("unigram_cross_entropy", "log_base_two",
             "用了以 2 为底的对数（单位 bits）；本课程的损失都用自然对数，单位 nats（ln V 而不是 log2 V）。",
             "log base 2 was used (bits); the course measures every loss in nats with the natural log (ln V, not "
             "log2 V).",
             ("math.log(count / total)", "math.log2(count / total)"))

# the probabilities multiplied first and the log taken once: right for a few ids, 0 (so inf) for thousands
fault.change("unigram_cross_entropy", "log_of_product",
             "5000 个约 1/50 的概率时你的结果是无穷大（答案约 3.9 nats）：许多概率的乘积（约 10⁻⁸⁵⁰⁰）在任何浮点数里都下溢成 0，再取对数就是无穷大。应逐个累加 −ln p，再除以个数。",
             "with 5,000 ids of probability about 1/50 your result is infinite (the answer is about 3.9 nats): a"
             " product of many probabilities (about 1e-8500) underflows to 0 in any float before its log is taken."
             " Add up -ln p id by id, then divide by the count.",
             ("loss = 0.0", "product = 1.0"), ("loss -= math.log(count / total)", "product *= count / total"),
             ("return loss / len(eval_ids)",
              "return -math.log(product) / len(eval_ids) if product > 0 else math.inf"), observed=True)

fault.change("unigram_cross_entropy", "no_smoothing",
             "没有做平滑（忽略了 alpha）；训练中没出现过的 id 概率为 0，交叉熵会变成无穷大。",
             "no smoothing (alpha ignored); an id never seen in training gets probability 0 and the cross entropy "
             "becomes infinite.",
             (TOTAL, "total = len(train_ids)"), ("counts.get(int(index), 0) + alpha", "counts.get(int(index), 0)"),
             (ZERO_GUARD, ""))  # nor any thought of a zero probability: log(0) raises

fault.change("unigram_cross_entropy", "denominator_without_alpha_v",
             "分母漏了 alpha·V：每个 id 的次数都加了 alpha，总数就要加 alpha·V，否则概率之和大于 1。",
             "the denominator lacks alpha*V: alpha is added to every id's count, so the total grows by alpha*V; "
             "otherwise the probabilities sum to more than 1.",
             (TOTAL, "total = len(train_ids)"))

fault.change("unigram_cross_entropy", "denominator_with_one_alpha",
             "分母只加了一个 alpha：V 个 id 的次数各加了 alpha，总数就要加 alpha·V，否则概率之和大于 1。",
             "the denominator adds alpha once: each of the V ids' counts grows by alpha, so the total grows by "
             "alpha*V; otherwise the probabilities sum to more than 1.",
             (TOTAL, "total = len(train_ids) + alpha"))

fault.change("unigram_cross_entropy", "smoothing_over_seen_ids",
             "只在训练中出现过的 id 上做了平滑；约定是在整个字表（V 个 id）上加 alpha。",
             "smoothing covers only the ids seen in training; the convention adds alpha over the whole vocabulary "
             "(V ids).",
             (TOTAL, "total = len(train_ids) + alpha * len(counts)"))

fault.change("unigram_cross_entropy", "mean_over_vocabulary",
             "对字表里的 V 个 id 求了平均，而不是对评估序列的词元求平均；交叉熵是每个词元的平均损失。",
             "the average is over the V ids of the vocabulary instead of over the evaluated tokens; cross entropy is "
             "the mean loss per token.",
             ("for index in eval_ids:", "for index in range(vocab_size):"),
             ("return loss / len(eval_ids)", "return loss / vocab_size"))

# alpha=0 and an id never seen in training: the notebook asks for math.inf (-ln 0), exactly
fault.change("unigram_cross_entropy", "zero_probability_raises_value_error",
             "alpha=0 且 eval_ids 里有训练中没出现过的 id 时抛出了 ValueError（math.log(0) 的 math domain error）；"
             "这个 id 的概率为 0，-ln 0 是无穷大，按约定应返回 math.inf。检查概率为 0 的那一步。",
             "with alpha=0 and an evaluated id never seen in training, the body raises ValueError (math.log(0) is a "
             "math domain error); that id's probability is 0 and -ln 0 is infinite, so the convention is to return "
             "math.inf. Recheck the step where a probability is 0.",
             (ZERO_GUARD, ""))

fault.change("unigram_cross_entropy", "zero_probability_raises_zero_division",
             "alpha=0 且 eval_ids 里有训练中没出现过的 id 时抛出了 ZeroDivisionError（把 -ln(c/N) 写成 ln(N/c)，c 为 0）；"
             "这个 id 的概率为 0，交叉熵是无穷大，按约定应返回 math.inf。检查概率为 0 的那一步。",
             "with alpha=0 and an evaluated id never seen in training, the body raises ZeroDivisionError (-ln(c/N) "
             "written as ln(N/c) with c = 0); that id's probability is 0, the cross entropy is infinite, and the "
             "convention is to return math.inf. Recheck the step where a probability is 0.",
             (ZERO_GUARD, ""), ("loss -= math.log(count / total)", "loss += math.log(total / count)"))

fault.change("unigram_cross_entropy", "zero_probability_skipped",
             "alpha=0 时训练中没出现过的 id 被跳过了，结果是一个有限的数；这个 id 的概率为 0，它的损失 -ln 0 是无穷大，"
             "平均值也就是无穷大，应返回 math.inf，不能把它略去。检查概率为 0 的那一步。",
             "with alpha=0 an id never seen in training is skipped and the result is finite; that id's probability is "
             "0, its loss -ln 0 is infinite and so is the mean: return math.inf instead of leaving it out. Recheck "
             "the step where a probability is 0.",
             ("        return math.inf", "        continue"))


# --- the contract and the rules, from the independent set (issue 39) ---------------------------


fault.change("decode", "tensor_ids_unchecked",
             "张量形式的 id 没有检查范围：-1 被当成 Python 的负下标取到最后一个字。任何不在 [0, V) 里的 id，列表也好、"
             "张量也好，都抛出 ValueError。",
             "ids given as a tensor are not range-checked: -1 is taken as a negative Python index and reads the last "
             "token. Any id outside [0, V), in a list or in a tensor, raises ValueError.",
             ("    if not 0 <= index < len(self.itos):",
              "    if not hasattr(ids, \"shape\") and not 0 <= index < len(self.itos):"))

fault.change("decode", "empty_tensor_max",
             "空的张量让你的代码出错了（空张量没有 min() 和 max()）：空的 id 序列解码成空字符串，张量也一样。",
             "an empty tensor made your code fail (an empty tensor has no min() or max()): an empty sequence of ids"
             " decodes to the empty string, as a tensor too.",
             ("pieces = []", "if hasattr(ids, \"max\") and int(ids.max()) >= len(self.itos):\n"
                             "    raise ValueError(\"id out of range\")\npieces = []"), observed=True)

fault.change("encode", "unknown_added_to_stoi",
             "encode 把表外的字加进了 self.stoi（setdefault）：encode 只读词表，不往里添东西。",
             "encode adds the unknown characters to self.stoi (setdefault): encode reads the vocabulary and adds "
             "nothing to it.",
             ("self.stoi.get(char, self.unk_id)", "self.stoi.setdefault(char, self.unk_id)"))

fault.change("encode", "literal_unk_as_one_id",
             "文本里的字符串 \"<unk>\" 被编成了一个 id：它是五个字，每个字一个 id（都不在词表里就是五个 <unk>）。",
             "the text \"<unk>\" was encoded as one id: it is five characters, one id each (five <unk> ids when none of "
             "them is in the vocabulary).",
             ("for char in text]", "for char in text.replace(\"<unk>\", \"\\x00\")]"))

fault.change("encode", "sequences_refused_only",
             "只有 list 和 tuple 抛出 TypeError：不是 str 的任何输入（dict、bytes……）都抛出 TypeError。",
             "only a list or a tuple raises TypeError: any input that is not a str (a dict, bytes...) raises"
             " TypeError.",
             ("if not isinstance(text, str):", "if isinstance(text, (list, tuple)):"))

fault.change("unigram_cross_entropy", "eval_ids_sorted",
             "eval_ids 被原地排序了（.sort()）：练习函数只读传给它的列表，调用之后它必须和调用前一样。",
             "eval_ids was sorted in place (.sort()): an exercise only reads the lists it is given, which must be as "
             "they were after the call.",
             ("for index in eval_ids:", "eval_ids.sort()\nfor index in eval_ids:"))


@fault("coverage",
       "把每个词表项在文本里出现的次数加起来（text.count），连 <unk> 也算：文本里写着的 \"<unk>\" 五个字不在词表里，"
       "一个字也不覆盖。逐字判断它在不在词表（<unk> 除外）里。",
       "the occurrences of every vocabulary entry in the text were added up (text.count), <unk> included: the five "
       "characters of a \"<unk>\" written in the text are not in the vocabulary and cover nothing. Check character "
       "by character whether it is in the vocabulary (<unk> aside).")
def counts_every_entry(itos, text):
    return sum(text.count(token) for token in set(itos)) / len(text)

"""What each chapter-1 exercise is asked to compute: cases, test doubles, probes.

Every exercise is graded alone.  `encode` and `decode` get a `Tokenizer` built directly from
an id-to-token list chosen here (never from the student's `build_vocab`); `coverage` gets an
id-to-token list; `unigram_cross_entropy` gets lists of ids.  While `coverage` runs,
`Tokenizer.encode` is a test double (a plain dictionary lookup written here), so a coverage
written through `encode` earns its marks whatever state `encode` is in.

Where a correct implementation must raise (encode of a list, decode of an id outside [0, V)),
the probe returns "raised <ExceptionType>", so a wrong kind of error, or none, is a wrong result
like any other.  NotImplementedError is never caught: a stub still reads as a stub.

This file imports only torch and the standard library: the worker loads it inside the sandbox
next to student code.
"""

import contextlib

import torch

UNK = "<unk>"

# Tang poems from the course's corpus (全唐诗, public domain), one poem per line as in corpus_text
POEM_A = "檀欒竹影，飆䫻松聲。不煩歌吹，自足娛情。\n仰循茅宇，俯眄喬枝。煙霞問訊，風月相知。\n"
POEM_B = "清波洶湧，碧樹冥蒙。莫怪留步，因攀桂叢。\n莫論圓嶠，休說方壺。何如魯館，即是仙都。\n"
POEM_C = "嬾步天台路，惟登地肺山。幽巖仙桂滿，今日恣情攀。\n暫遊仁智所，蕭然松桂情。寄言棲遯客，勿復訪蓬瀛。\n"
# characters for generated texts: distinct, some of them in the poems above
ALPHABET = "山月風花雪春秋水雲天人日夜江南北東西中長高青白明，。\n"

ENCODE_ITOS = [UNK, "，", "。", "\n", "山", "月", "風", "雲", "花", "水", "春", "秋"]  # V = 12


def _text(gen, length, skew=1.5):
    """A text of `length` characters of ALPHABET with Zipf-like frequencies (many ties in count)."""
    weights = 1.0 / torch.arange(1, len(ALPHABET) + 1, dtype=torch.float64) ** skew
    picks = torch.multinomial(weights, length, replacement=True, generator=gen)
    order = torch.randperm(len(ALPHABET), generator=gen)  # frequency rank unrelated to code point
    return "".join(ALPHABET[order[i]] for i in picks.tolist())


def _ids(gen, length, high):
    return torch.randint(0, high, (length,), generator=gen, dtype=torch.int64)


def make_cases(exercise_id):
    """Inputs for one exercise, identical on every run (fixed generator)."""
    gen = torch.Generator().manual_seed(20260101)
    if exercise_id == "build_vocab":
        return {
            "poems": {"text": POEM_A + POEM_B, "max_size": 12},
            "cap_above_distinct": {"text": POEM_B, "max_size": 64},
            "equal_counts": {"text": "雲月風山" * 3 + "山風月雲", "max_size": 3},
            "only_unk": {"text": POEM_C, "max_size": 1},
            "generated": {"text": _text(gen, 400), "max_size": 20},
            # the first case's cap with another text: a vocabulary kept from an earlier call shows
            "same_cap_other_text": {"text": POEM_C, "max_size": 12},
            # ties past U+FFFF: 𠀀 (U+20000, an extension-B character) after ， (U+FF0C) by code point, though
            # before it in UTF-16 (a surrogate pair starts with 0xD840)
            "beyond_the_bmp": {"text": "𠀀，山" * 3 + "月", "max_size": 4},
        }
    if exercise_id == "encode":
        return {
            "known": {"itos": ENCODE_ITOS, "text": "山月，春風花。\n秋水雲山月，"},
            "unknown": {"itos": ENCODE_ITOS, "text": "明月照山，清泉石上流。\n"},
            "list_input": {"itos": ENCODE_ITOS, "text": ["山", "月"]},
            "generated": {"itos": [UNK] + list(ALPHABET[:20]), "text": _text(gen, 300)},
            # the first case's text with another vocabulary: ids kept from another tokenizer show
            "other_vocab": {"itos": [UNK] + list(reversed(ALPHABET)), "text": "山月，春風花。\n秋水雲山月，"},
            "tuple_input": {"itos": ENCODE_ITOS, "text": tuple("山月")},  # not a str either: TypeError
            # a dict of characters iterates like a text, but is no str either (bytes do not reach the worker)
            "dict_input": {"itos": ENCODE_ITOS, "text": {"山": 1, "月": 2}},
            # the text "<unk>" is five characters, none of them in the vocabulary: five unknown ids
            "literal_unk": {"itos": ENCODE_ITOS, "text": "山<unk>月"},
        }
    if exercise_id == "decode":
        itos = [UNK] + list(ALPHABET)  # V = 28
        return {
            "ids": {"itos": itos, "ids": torch.tensor([5, 1, 2, 25, 3, 3, 26, 27, 1], dtype=torch.int64)},
            "with_unk": {"itos": itos, "ids": torch.tensor([0, 4, 0, 0, 7, 27], dtype=torch.int64)},
            "tensor": {"itos": itos, "ids": _ids(gen, 50, len(itos)), "as_tensor": True},
            "negative": {"itos": itos, "ids": torch.tensor([3, -1], dtype=torch.int64)},
            "too_large": {"itos": itos, "ids": torch.tensor([2, len(itos)], dtype=torch.int64)},
            # past V, not just at it: a bound written as `index != V` lets these through
            "far_too_large": {"itos": itos, "ids": torch.tensor([len(itos) + 5, 1], dtype=torch.int64)},
            # the same rules for a tensor of ids: a negative one is an error, an empty one decodes to ""
            "negative_tensor": {"itos": itos, "ids": torch.tensor([3, -1], dtype=torch.int64), "as_tensor": True},
            "empty_tensor": {"itos": itos, "ids": torch.zeros(0, dtype=torch.int64), "as_tensor": True},
        }
    if exercise_id == "coverage":
        return {
            "small_vocab": {"itos": [UNK, "，", "。", "\n", "桂"], "text": POEM_B},
            "other_text": {"itos": [UNK] + list(ALPHABET), "text": POEM_C},
            "full": {"itos": [UNK] + sorted(set(POEM_A)), "text": POEM_A},
            "nothing": {"itos": [UNK], "text": POEM_A},
            "generated": {"itos": [UNK] + list(ALPHABET[:12]), "text": _text(gen, 500)},
            # the five characters of a literal "<unk>" in the text are not in the vocabulary: not covered
            "literal_unk": {"itos": [UNK, "山", "月"], "text": "山<unk>月"},
        }
    if exercise_id == "unigram_cross_entropy":
        train = _ids(gen, 400, 25)
        return {
            "in_sample": {"train": torch.tensor([1, 1, 1, 1, 2, 2, 3, 5]), "eval": torch.tensor([1, 1, 1, 1, 2, 2, 3, 5]),
                          "vocab_size": 8, "alpha": 0.0},
            "smoothed_in_sample": {"train": torch.tensor([1, 1, 1, 1, 2, 2, 3, 5]),
                                   "eval": torch.tensor([1, 1, 1, 1, 2, 2, 3, 5]), "vocab_size": 8, "alpha": 1.0},
            "heldout": {"train": torch.tensor([0, 2, 2, 2, 4, 4, 6, 1, 2]), "eval": torch.tensor([2, 7, 4, 9, 2]),
                        "vocab_size": 10, "alpha": 1.0},
            "half": {"train": torch.tensor([3, 3, 1, 0, 3, 2]), "eval": torch.tensor([3, 4, 0]), "vocab_size": 6,
                     "alpha": 0.5},
            "default_alpha": {"train": torch.tensor([1, 2, 2, 3, 3, 3]), "eval": torch.tensor([0, 3, 2, 3]),
                              "vocab_size": 40},
            "uniform": {"train": torch.arange(16), "eval": torch.tensor([0, 5, 5, 9, 15]), "vocab_size": 16,
                        "alpha": 2.0},
            "generated": {"train": train, "eval": _ids(gen, 120, 30), "vocab_size": 30, "alpha": 1.0},
            # one evaluation per id: exp(-value) is the probability of that id, and they must sum to 1
            "each_id": {"train": torch.tensor([0, 2, 2, 5, 5, 5, 1]), "vocab_size": 8, "alpha": 0.5},
            # unsmoothed, and id 4 never occurs in training: probability 0, so math.inf (the notebook's rule)
            "unseen_unsmoothed": {"train": torch.tensor([1, 1, 2, 3, 3, 3]), "eval": torch.tensor([3, 4, 1]),
                                  "vocab_size": 6, "alpha": 0.0},
            # 5,000 ids at about 1/50 each: the answer is near ln 50 = 3.9 nats, while the product of their
            # probabilities (about 1e-8500) is 0 in any float
            "long_eval": {"train": _ids(gen, 400, 50), "eval": _ids(gen, 5000, 50), "vocab_size": 50, "alpha": 1.0},
        }
    raise KeyError(exercise_id)


# --- test doubles and helpers --------------------------------------------------------


def _lookup_encode(self, text):
    """A stand-in for Tokenizer.encode while `coverage` runs: each character's position in
    `self.itos` (0 when absent), listed from the LAST character to the first.  Coverage does not
    depend on the order; encode does, so student code in this process cannot use it as encode."""
    positions = {token: index for index, token in enumerate(self.itos)}
    return [positions.get(char, 0) for char in reversed(text)]


@contextlib.contextmanager
def _encode_double_in(module):
    tokenizer = getattr(module, "Tokenizer", None)
    if tokenizer is None:
        yield
        return
    saved = tokenizer.__dict__.get("encode")
    tokenizer.encode = _lookup_encode
    try:
        yield
    finally:
        if saved is None:
            del tokenizer.encode
        else:
            tokenizer.encode = saved


def _raised(call):
    """The value of call(), or "raised <type>" when it raises (never for a stub)."""
    try:
        return call()
    except NotImplementedError:
        raise
    except Exception as exc:  # the expected outcome of some cases, a wrong one of others
        return f"raised {type(exc).__name__}"


def _id_list(value):
    """A list of Python ints as an int64 tensor (so long lists travel); a list with another item as what
    was seen (which item, of which type), so the feedback observes it; anything else as it is."""
    if isinstance(value, (list, tuple)):
        other = next(((i, item) for i, item in enumerate(value) if type(item) is not int), None)
        if other is None:
            return torch.tensor(list(value), dtype=torch.int64)
        return (f"a {type(value).__name__} whose item {other[0]} is a {type(other[1]).__name__}, "
                "not a Python int")
    return value


def _number(value):
    """A Python float as a 0-dim float64 tensor, compared with the course's tolerance; anything else
    (an int, a numpy or torch number) as what was seen: the text asks for a float, and the course's
    functions return Python's own numbers."""
    if type(value) is float:
        return torch.tensor(value, dtype=torch.float64)
    kind = type(value).__module__ + "." + type(value).__qualname__ if type(value).__module__ != "builtins" \
        else type(value).__name__
    return f"a {kind}, not a Python float"


# --- probes ----------------------------------------------------------------------------


def run_case(module, exercise_id, case_name, case, device):
    """Outputs of one case.  The exercises of this chapter run on Python values; `device`
    only decides where the ids of decode's tensor case live."""
    if exercise_id == "build_vocab":
        return module.build_vocab(case["text"], case["max_size"])
    if exercise_id == "encode":
        tokenizer = module.Tokenizer(case["itos"])
        table = dict(tokenizer.stoi)
        if case_name in ("unknown", "list_input", "tuple_input", "dict_input"):
            ids = _id_list(_raised(lambda: tokenizer.encode(case["text"])))
        else:
            ids = _id_list(tokenizer.encode(case["text"]))
        if tokenizer.stoi != table:  # encode reads the vocabulary; it never adds to it
            return (f"encode changed the tokenizer's stoi (it had {len(table)} entries, it has "
                    f"{len(tokenizer.stoi)} after the call)")
        return ids
    if exercise_id == "decode":
        tokenizer = module.Tokenizer(case["itos"])
        ids = case["ids"].to(device) if case.get("as_tensor") else case["ids"].tolist()
        if case_name in ("negative", "too_large", "far_too_large", "negative_tensor"):
            return _raised(lambda: tokenizer.decode(ids))
        return tokenizer.decode(ids)
    if exercise_id == "coverage":
        with _encode_double_in(module):
            return _number(module.coverage(case["itos"], case["text"]))
    if exercise_id == "unigram_cross_entropy":
        train = case["train"].tolist()  # the lists of Python ints a caller passes
        if case_name == "each_id":
            values = [float(module.unigram_cross_entropy(train, [i], case["vocab_size"], alpha=case["alpha"]))
                      for i in range(case["vocab_size"])]
            return torch.tensor(values, dtype=torch.float64)
        evaluated = case["eval"].tolist()
        given = (list(train), list(evaluated))
        alpha = {"alpha": case["alpha"]} if "alpha" in case else {}
        value = _number(module.unigram_cross_entropy(train, evaluated, case["vocab_size"], **alpha))
        if (train, evaluated) != given:  # made here, so the grader's contract check cannot see them change
            return "unigram_cross_entropy changed a list it was given (train_ids or eval_ids): it only reads them"
        return value
    raise KeyError(exercise_id)

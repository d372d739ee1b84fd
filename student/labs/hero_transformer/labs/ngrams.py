"""Seed 003 §2.12.3: n-gram tables as a baseline for "does the task need long context?".

No training.  For each context length k (k characters before the one predicted; k = 0 is the
unigram baseline), a table of counts is built on the training part and read three ways:

- `train_ml`: maximum likelihood, evaluated on the training text itself (the seed's first try,
  "6-gram: 0.006": a table that has seen the answers);
- `heldout_add_one`: add-one smoothing inside a context, which gives the uniform 1/V to a context
  never seen in training, evaluated on the held-out part (the seed's corrected table: unseen
  contexts "fall back to the uniform distribution");
- `heldout_witten_bell`: Witten-Bell interpolation with the next shorter context (no parameter to
  tune; the unigram at the bottom is add-one), a standard estimator for sparse tables.

A held-out difference between two tables is judged by its 95% interval over CHUNKS equal
stretches of the held-out text (a paired t-interval): the tables are fixed, the text they are
read on is a sample.

The seed's labels "1-gram ... 6-gram" are context lengths: its "1-gram" 4.818 is below its own
unigram baseline 5.672, which only a model that reads one character of context can be.
"""

import math
from collections import Counter

from .evidence import Check, less, t_interval
from .runner import Claim, Lab, Run, fmt, plot_finals, settings

SETTINGS = settings({"tiny": {"orders": [0, 1, 2], "seeds": [0]},
                     "quick": {"orders": [0, 1, 2, 3, 4, 6], "seeds": [0]},
                     "full": {"orders": [0, 1, 2, 3, 4, 6], "seeds": [0]}})
CHUNKS = 20  # stretches of the held-out text for the interval of a difference
SEED_TABLE = {1: 4.818, 2: 5.698, 3: 6.401, 4: 6.720, 6: 6.817}  # seed 003 §2.12.3, held out


def runs(setting):
    return [Run(f"k{k}", {"order": k}) for k in setting["orders"]]


def counts(ids, k):
    """(Counter of (context, next), Counter of context) for contexts of k characters."""
    pairs = Counter(tuple(ids[i - k:i + 1]) for i in range(k, len(ids)))
    contexts = Counter()
    for gram, n in pairs.items():
        contexts[gram[:-1]] += n
    return pairs, contexts


def losses(ids, k, probability):
    """-log p(next | the k characters before it) at every position of ids (0 for the first k,
    which have no full context: every order is read on the same positions from MAX_ORDER on)."""
    return [0.0] * k + [-math.log(probability(tuple(ids[i - k:i]), ids[i])) for i in range(k, len(ids))]


def chunk_means(values, start):
    """The mean of values[start:] over CHUNKS equal stretches."""
    size = (len(values) - start) // CHUNKS
    return [sum(values[start + c * size:start + (c + 1) * size]) / size for c in range(CHUNKS)]


def execute(run, setting, context):
    k, vocab = run.params["order"], context.data["vocab_size"]
    train, val = context.data["train"].tolist(), context.data["val"].tolist()
    tables = [counts(train, j) for j in range(k + 1)]
    pairs, contexts = tables[k]
    followers = [Counter(gram[:-1] for gram in table[0]) for table in tables]  # distinct next characters per context

    def add_one(ctx, nxt):
        return (pairs.get(ctx + (nxt,), 0) + 1) / (contexts.get(ctx, 0) + vocab)

    def witten_bell(ctx, nxt, j=None):
        j = k if j is None else j
        if j == 0:
            return (tables[0][0].get((nxt,), 0) + 1) / (tables[0][1][()] + vocab)
        ctx = ctx[len(ctx) - j:]
        seen, distinct = tables[j][1].get(ctx, 0), followers[j].get(ctx, 0)
        lower = witten_bell(ctx, nxt, j - 1)
        if seen == 0:
            return lower
        return (tables[j][0].get(ctx + (nxt,), 0) + distinct * lower) / (seen + distinct)

    start = max(setting["orders"])  # every order is read on the same held-out positions
    seen_positions = sum(tuple(val[i - k:i]) in contexts for i in range(start, len(val)))
    train_ml = losses(train, k, lambda ctx, nxt: pairs[ctx + (nxt,)] / contexts[ctx])
    add, bell = chunk_means(losses(val, k, add_one), start), chunk_means(losses(val, k, witten_bell), start)
    return {"order": k, "contexts": len(contexts), "heldout_seen_context": seen_positions / (len(val) - start),
            "train_ml": sum(train_ml[k:]) / (len(train) - k),
            "heldout_add_one": sum(add) / CHUNKS, "heldout_witten_bell": sum(bell) / CHUNKS,
            "heldout_add_one_chunks": add, "heldout_witten_bell_chunks": bell}


def column(view, key):
    return [view["runs"][f"k{k}"]["result"][key] for k in view["setting"]["orders"]]


def table(view, key):
    return " / ".join(f"k{k} {fmt(v)}" for k, v in zip(view["setting"]["orders"], column(view, key)))


def difference(view, key, a, b):
    """Check that reading b is worse than reading a (key: the estimator), by its paired interval
    over the held-out chunks."""
    chunks = [view["runs"][f"k{k}"]["result"][f"{key}_chunks"] for k in (a, b)]
    mean, _, low, high = t_interval([y - x for x, y in zip(*chunks)])
    name = {"heldout_add_one": "add-one", "heldout_witten_bell": "Witten-Bell"}[key]
    return Check(f"{name} k{b} − k{a} ({CHUNKS} held-out stretches)", mean, ">", 0, interval=(low, high))


def judge_memorises(view):
    longest = view["setting"]["orders"][-1]
    value = view["runs"][f"k{longest}"]["result"]["train_ml"]
    return (f"maximum likelihood on the training text: {table(view, 'train_ml')}",
            [less(f"k{longest} on its own training text", value, 0.1, exact=True)])


def judge_sparse_worse(views):
    view = views[0]  # one table: no seed changes it
    orders = view["setting"]["orders"]
    longer = orders[orders.index(1):] if 1 in orders else orders
    return (f"add-one, held out: {table(view, 'heldout_add_one')} (held-out positions with a context seen in "
            f"training: {' / '.join(f'{s:.0%}' for s in column(view, 'heldout_seen_context'))})",
            [difference(view, "heldout_add_one", a, b) for a, b in zip(longer, longer[1:])])


def judge_route_fails(views):
    view = views[0]
    orders = view["setting"]["orders"]
    if 1 not in orders:
        return "no context of 1 in this grid", []
    return (f"Witten-Bell, held out: {table(view, 'heldout_witten_bell')}",
            [difference(view, "heldout_witten_bell", 1, k) for k in orders if k > 1])


CLAIMS = (
    Claim("memorised_on_train", "在训练集上评估，6-gram 的 loss 接近 0：它在背答案。",
          "Evaluated on its own training text, the 6-gram's loss is near 0: it has memorised the answers.",
          "seed 003 §2.12.3", "6-gram: 0.006", judge_memorises),
    Claim("longer_contexts_worse", "在验证集上，上下文越长的 n-gram 越差（数据稀疏，未见过的上下文退回均匀分布）。",
          "On held-out text, the longer the n-gram's context the worse (sparse data; unseen contexts fall back to uniform).",
          "seed 003 §2.12.3", "4.818 / 5.698 / 6.401 / 6.720 / 6.817 for contexts 1 / 2 / 3 / 4 / 6", judge_sparse_worse,
          pooled=True),
    Claim("ngram_route_fails", "n-gram 看不出任务是否需要更长的上下文：超过 1 个字的上下文都更差。",
          "n-grams cannot show whether the task needs longer context: every context longer than 1 does worse.",
          "seed 003 §2.12.3", "'this route does not work: sparsity drowns the signal' (its add-one table)",
          judge_route_fails, pooled=True),
)


def plot(views, folder):
    orders = views[0]["setting"]["orders"]
    series = {name: (lambda view, key=key: column(view, key)) for name, key in
              (("add-one, held out", "heldout_add_one"), ("Witten-Bell, held out", "heldout_witten_bell"),
               ("maximum likelihood, training text", "train_ml"))}

    def seed_table(ax):
        ax.plot(list(SEED_TABLE), list(SEED_TABLE.values()), "k+", markersize=9, label="seed 003 (held out)")

    return [plot_finals(views, folder, "ngrams", orders, series, "context length k (characters)",
                        ylabel="cross-entropy (nats)", extra=seed_table)]


LAB = Lab("ngrams", "n-gram 基线", "n-gram tables by context length (add-one, Witten-Bell, on the training text)",
          "上下文从 0 个字加到 6 个字，n-gram 表在验证集上的 loss 会怎样变？在训练集上呢？先写下你的预测。",
          SETTINGS, runs, execute, CLAIMS, plot, order=9)

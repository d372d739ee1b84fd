"""Verdicts from several seeds: a claim is held, not held or undecided by a 95% interval.

A claim's judge measures one seed's runs and returns `Check`s: named quantities, each with what
the claim says of it (`value < threshold`, `value > threshold`, `value == threshold`).  Over the
seeds each check gets its mean, its seed-to-seed standard deviation and a 95% Student-t interval
of the mean, and the one decision rule of the labs applies (docs/labs.md, "How a claim is
judged"):

- a check holds when its whole interval satisfies the claim, fails when its whole interval
  contradicts it, and is undecided otherwise (the difference lies inside the noise);
- a claim holds when every check holds, is not held when any check fails, else undecided;
- a check marked `regime` is a precondition (e.g. "the healthy model trained clearly below the
  unigram baseline"): unless it clearly holds, the claim is "undecided: <regime>", never "not
  held", because a model that has not reached the regime cannot contradict a claim about it.

A check whose value is a statistic of all seeds together (e.g. the seed-to-seed spread itself)
carries its own interval (a pooled claim).  A check marked `exact` is a computation that no seed
changes (a count, a closed form, an n-gram table): its interval is the range of its values, one
value included.  The t and chi-square quantiles come from SciPy.
"""

import math
from dataclasses import dataclass

CONFIDENCE = 0.95
# a run counts as trained when its held-out loss ends this far below the unigram baseline: more
# than twice the seed's pooled spread of a final loss (0.08 nats; context_noise measures ours smaller)
TRAINED_MARGIN = 0.2
UNDER_TRAINED = "under-trained"
NOT_SEED_CONFIG = "not the seed's configuration"
REGIMES_ZH = {UNDER_TRAINED: "训练不足", NOT_SEED_CONFIG: "不是种子教材的配置"}
VERDICTS_ZH = {"held": "成立", "not held": "不成立", "undecided": "无法判断", "not judged": "不作判断（问题或练习）"}
OPS = ("<", ">", "==")


@dataclass(frozen=True)
class Check:
    """One quantity measured on one seed.  op None: a figure reported, not judged.  regime: the
    precondition's name when this check is one.  interval: given by a pooled judge."""
    name: str
    value: float = None
    op: str = None
    threshold: float = None
    regime: str = None
    interval: tuple = None
    exact: bool = False

    def __post_init__(self):
        if self.op not in OPS + (None,):
            raise ValueError(f"op must be one of {OPS} or None, not {self.op!r}")


def less(name, value, threshold, regime=None, exact=False):
    return Check(name, value, "<", threshold, regime, exact=exact)


def more(name, value, threshold, regime=None, exact=False):
    return Check(name, value, ">", threshold, regime, exact=exact)


def within(name, value, low, high):
    """Two checks: low < value < high."""
    return [more(f"{name} (low end)", value, low), less(f"{name} (high end)", value, high)]


def equal(name, value, threshold):
    return Check(name, value, "==", threshold)


def report(name, value):
    return Check(name, value)


def trained(name, loss, unigram):
    """The precondition that a run's held-out loss ended clearly below the unigram baseline."""
    return more(f"{name}: unigram − held-out", None if loss is None else unigram - loss, TRAINED_MARGIN,
                regime=UNDER_TRAINED)


def seed_config(mode):
    """The precondition that the figures come from the seed's own configuration (mode full)."""
    return Check("the seed's configuration (full mode)", 1.0 if mode == "full" else 0.0, "==", 1.0,
                 regime=NOT_SEED_CONFIG)


def t_interval(values, confidence=CONFIDENCE):
    """(mean, sample standard deviation, low, high): the Student-t interval of the mean.  One
    value has no interval (-inf, inf); equal values a point."""
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return mean, None, -math.inf, math.inf
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    if sd == 0:
        return mean, 0.0, mean, mean
    from scipy import stats

    half = stats.t.ppf(0.5 + confidence / 2, n - 1) * sd / math.sqrt(n)
    return mean, sd, mean - half, mean + half


def sd_interval(residuals, dof, confidence=CONFIDENCE):
    """(pooled standard deviation, low, high) from a sum of squared residuals with `dof`
    degrees of freedom: the chi-square interval of a normal population's sigma."""
    from scipy import stats

    sd = math.sqrt(residuals / dof)
    alpha = 1 - confidence
    return sd, math.sqrt(residuals / stats.chi2.ppf(1 - alpha / 2, dof)), math.sqrt(residuals / stats.chi2.ppf(alpha / 2, dof))


def decide(op, threshold, low, high):
    """True / False / None: the interval [low, high] against `op threshold`."""
    if op == "<":
        return True if high < threshold else False if low >= threshold else None
    if op == ">":
        return True if low > threshold else False if high <= threshold else None
    if low == high:
        return low == threshold
    return False if not low <= threshold <= high else None


def summarise(per_seed, pooled=None):
    """The claim's record from its checks: per_seed is [[Check, ...] for each seed] (the same
    names in the same order on every seed), or pooled a single [Check] with intervals.  Returns
    (checks as dicts, verdict text, held: True / False / None)."""
    checks = []
    if pooled is not None:
        for check in pooled:
            low, high = check.interval if check.interval else (-math.inf, math.inf)
            checks.append(_record(check, [check.value], check.value, None, low, high))
    elif per_seed:
        for i, first in enumerate(per_seed[0]):
            values = [seed[i].value for seed in per_seed]
            finite = [v for v in values if v is not None and math.isfinite(v)]
            if not finite:
                mean, sd, low, high = None, None, -math.inf, math.inf
            elif first.exact:  # no seed changes it: the values themselves are the interval
                mean, sd, low, high = sum(finite) / len(finite), None, min(finite), max(finite)
            else:
                mean, sd, low, high = t_interval(finite)
            checks.append(_record(first, values, mean, sd, low, high))
    regimes = [c for c in checks if c["regime"]]
    judged = [c for c in checks if c["op"] and not c["regime"]]
    failed = next((c["regime"] for c in regimes if c["decision"] is not True), None)
    if failed:
        return checks, f"undecided: {failed}", None
    if not judged:
        return checks, "not judged", None
    decisions = [c["decision"] for c in judged]
    if False in decisions:
        return checks, "not held", False
    if all(decisions):
        return checks, "held", True
    return checks, "undecided", None


def _record(check, values, mean, sd, low, high):
    decision = decide(check.op, check.threshold, low, high) if check.op and mean is not None else None
    return {"name": check.name, "op": check.op, "threshold": check.threshold, "regime": check.regime,
            "exact": check.exact, "values": values, "mean": mean, "sd": sd, "low": _finite(low), "high": _finite(high),
            "decision": decision}


def _finite(value):
    return value if math.isfinite(value) else None  # JSON has no infinity


def number(value):
    if value is None:
        return "—"
    if value == 0 or 0.01 <= abs(value) < 1000:
        return f"{value:.3f}"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.2g}"


def describe(check):
    """One check as a line: name: mean ± sd [95% interval] against the claim, and its decision."""
    if check["mean"] is None:
        return f"{check['name']}: no value on any seed (a run diverged, or a healthy run did not train)"
    spread = "" if check["sd"] is None else f" ± {number(check['sd'])}"
    interval = "" if check["low"] is None else (
        f" [{number(check['low'])}, {number(check['high'])}]" if check["low"] != check["high"] else "")
    n = sum(v is not None for v in check["values"])
    seeds = "exact" if check.get("exact") else (
        f"{n} seed{'s' if n != 1 else ''}" if len(check["values"]) > 1 or check["low"] is None else "pooled")
    rule = f" {check['op']} {number(check['threshold'])}" if check["op"] else ""
    mark = {True: " ✓", False: " ✗", None: " ?" if check["op"] else ""}[check["decision"]]
    return f"{check['name']}: {number(check['mean'])}{spread}{interval} ({seeds}){rule}{mark}"

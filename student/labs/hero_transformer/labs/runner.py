"""The lab runner: a grid of runs, resumable, with one progress bar, JSON and plots.

A lab (one module in this package) declares a `Lab`: its settings per mode (tiny for the tests,
quick for 2 CPU cores in minutes, full for the seed's configuration), the runs of its grid, how
one run executes, the claims it tests and its plots.  `run_lab` does the rest:

    build/labs/<name>/<mode>/runs/<run>.json   one file per finished run (kept: a rerun skips it
                                               while its parameters and setting are unchanged)
    build/labs/<name>/<mode>/results.json      setting, device, seconds, every run, every claim
    build/labs/<name>/<mode>/*.png             the lab's plots (matplotlib)

and prints each claim: what the seed says, its figure, ours, and the verdict.

Every run of a grid is repeated for each seed of the mode (`setting["seeds"]`, at least 3 outside
the tests), stored as `<run>_s<seed>.json`.  A claim's judge reads one seed's runs at a time (a
*seed view*: the results of one seed, keyed by the run's own key) and returns its checks; the
verdict over the seeds is `evidence.summarise`'s.
"""

import json
import math
import os
import platform
import sys
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Callable

import torch

from .. import corpus, tokens
from .. import train as loop
from ..model import Config
from . import evidence, variants

MODES = ("tiny", "quick", "full")
RUN_FORMAT = 3  # what every stored run holds (2: final diagnostics; 3: one file per run and seed)
VOCAB_SIZE = 1200  # seed 003's character vocabulary
CORPUS_POEMS = 4003  # chapter 8's corpus: the first 4,003 Tang poems (about 242K characters)


@dataclass(frozen=True)
class Claim:
    """A sentence of a seed that the runs can confirm or not.  `judge(view)` reads one seed's runs
    and returns (our figures as text, [evidence.Check]); pooled: `judge([view, ...])` reads every
    seed at once and its checks carry their own intervals (a statistic of the seeds themselves)."""
    key: str
    zh: str
    en: str
    source: str  # where the seed says it, e.g. "seed 003 §2.8"
    seed: str  # the seed's figure, as the seed gives it
    judge: Callable
    pooled: bool = False


@dataclass(frozen=True)
class Run:
    key: str  # a file name: letters, digits, _ and -
    params: dict  # JSON values only
    cost: int = 1  # units of the progress bar (training steps)


@dataclass(frozen=True)
class Lab:
    name: str
    title_zh: str
    title_en: str
    question_zh: str  # asked before running: what do you predict?
    settings: dict  # mode -> setting (JSON values)
    runs: Callable  # setting -> [Run]
    execute: Callable  # (run, setting, context) -> result dict (JSON values)
    claims: tuple
    plot: Callable  # ([seed view, ...], folder) -> [Path]
    order: int = 100  # its place in `hero lab list` and the course
    version: int = 1  # bump when a change to `execute` changes what a run stores: older runs are redone


@dataclass
class Context:
    """What a run may use: the data (the driver's corpus; loaded here when not given), the device,
    and the bar's callback."""
    device: str
    on_step: Callable = lambda step, loss: None
    log: Callable = print
    data: dict = None

    def __post_init__(self):
        if self.data is None:
            self.data = corpus_data(os.environ.get("HERO_LAB_CORPUS", "auto"))


@dataclass
class Report:
    lab: Lab
    mode: str
    folder: Path
    results: dict
    plots: list = field(default_factory=list)

    @property
    def claims(self):
        return self.results["claims"]

    @property
    def seeds(self):
        return self.results["seeds"]

    def view(self, seed=None):
        """The results of one seed (default: the first), shaped as one seed's grid: runs keyed by
        their own keys."""
        return seed_view(self.results, self.seeds[0] if seed is None else seed)

    def views(self):
        return seed_views(self.results)

    def table(self, language="en"):
        """Each claim: the claim, the seed's figure, ours (the first seed's figures, then every
        check over the seeds), and the verdict (en or zh)."""
        rows = []
        for claim in self.claims:
            first = next(iter(claim["per_seed"].items()), None)
            lines = [f"- {claim[language]}", f"    {claim['source']}: {claim['seed']}"]
            if first:
                lines.append(f"    {figures_of(first[0], language)} ({self.mode}): {first[1]}")
            lines += [f"    {evidence.describe(check)}" for check in claim["checks"]]
            lines.append(f"    → {verdict_text(claim['verdict'], language)} "
                         f"({len(self.seeds)} {'seeds' if language == 'en' else '个随机种子'})")
            rows.append("\n".join(lines))
        return "\n".join(rows)


def verdict_text(verdict, language="en"):
    """A verdict in English or Chinese: held, not held, undecided, undecided: <regime>, not judged."""
    if language == "en":
        return verdict
    head, _, regime = verdict.partition(": ")
    return evidence.VERDICTS_ZH[head] + (f"：{evidence.REGIMES_ZH[regime]}" if regime else "")


def figures_of(key, language="en"):
    """Whose figures a claim's text gives: a seed's, or all seeds' (a pooled claim's key "all")."""
    if key == "all":
        return {"en": "all seeds", "zh": "所有种子"}[language]
    return {"en": f"seed {key}", "zh": f"种子 {key}"}[language]


def seed_view(results, seed):
    """The results of one seed: its runs keyed by their own keys, the setting with its seed."""
    runs = {stored["base"]: stored for stored in results["runs"].values() if stored["seed"] == seed}
    return {**results, "setting": {**results["setting"], "seed": seed}, "runs": runs, "seeds": [seed]}


def seed_views(results):
    """Every seed's view, in the order of the seeds."""
    return [seed_view(results, seed) for seed in results["seeds"]]


def seeded_key(key, seed):
    """The file name of run `key` on `seed`; base_key undoes it."""
    return f"{key}_s{seed}"


def base_key(key):
    return key.rpartition("_s")[0]


# --- data ---------------------------------------------------------------------------------


@lru_cache(maxsize=None)
def corpus_data(source="auto"):
    """Chapter 8's split: the first 4,003 poems (the full corpus when cached, else the
    committed fixture), the last 10% held out whole, a 1,200-character vocabulary of the
    training part.  Returns a dict: train, val (int64 tensors), itos, source, uniform and
    unigram (add-one, trained on train, measured on val) in nats."""
    if source == "auto":
        source = "full" if corpus.is_cached() else "fixture"
    poems = corpus.load_poems(source, limit=CORPUS_POEMS)
    train_poems, val_poems = corpus.split_poems(poems)
    itos = tokens.build_vocab(corpus.corpus_text(train_poems), VOCAB_SIZE)
    coder = tokens.Tokenizer(itos)
    train_ids = coder.encode(corpus.corpus_text(train_poems))
    val_ids = coder.encode(corpus.corpus_text(val_poems))
    return {"source": source, "itos": itos, "vocab_size": coder.vocab_size,
            "train": torch.tensor(train_ids, dtype=torch.int64), "val": torch.tensor(val_ids, dtype=torch.int64),
            "uniform": tokens.uniform_cross_entropy(coder.vocab_size),
            "unigram": tokens.unigram_cross_entropy(train_ids, val_ids, coder.vocab_size, alpha=1.0)}


@lru_cache(maxsize=4)
def extended_train(source, factor):
    """Training ids `factor` times as long as corpus_data's: its training part followed by the
    poems after the first 4,003, encoded with the same vocabulary (so the held-out part and the
    baselines stay the same), cut to length.  Shorter when the corpus runs out (the fixture)."""
    data = corpus_data(source)
    coder = tokens.Tokenizer(data["itos"])
    extra = coder.encode(corpus.corpus_text(corpus.load_poems(source)[CORPUS_POEMS:]))
    joined = torch.cat([data["train"], torch.tensor(extra, dtype=torch.int64)])
    return joined[: round(factor * len(data["train"]))]


# --- the common run: build a variant, train it, evaluate it ------------------------------------


def config(setting, data, **overrides):
    """The model Config of a setting (d_model, n_heads, n_layers, d_ff, block_size), overridden."""
    values = {key: setting[key] for key in ("block_size", "d_model", "n_heads", "n_layers", "d_ff")}
    values.update(overrides)
    return Config(vocab_size=data["vocab_size"], dropout=0.0, **values)


def train_variant(setting, context, variant=variants.FROZEN, *, keep_model=False, seed=None, **overrides):
    """Build a LabLM (init from the run's seed) and train it with chapter 8's `train`; returns
    (result, model or None).  overrides: any of the setting's keys (n_layers, max_lr,
    warmup_steps, block_size, steps, ...) for this run."""
    s = {**setting, **overrides}
    data = context.data
    seed = s["seed"] if seed is None else seed
    model = variants.build(config(s, data), variant, seed=seed, device=context.device)
    history = loop.train(
        model, data["train"], data["val"], steps=s["steps"], batch_size=s["batch_size"],
        block_size=s.get("train_length", s["block_size"]), max_lr=s["max_lr"],
        min_lr=s["max_lr"] * s.get("min_lr_ratio", 0.1), warmup_steps=s["warmup_steps"],
        weight_decay=s.get("weight_decay", 0.1), max_grad_norm=s.get("max_grad_norm", 1.0),
        eval_every=s.get("eval_every", s["steps"]), seed=seed, progress=False,
        on_step=context.on_step, log=lambda line: None)
    finite = [v for v in history["val_loss"] if math.isfinite(v)]
    result = {"variant": variant.changes(), "parameters": sum(p.numel() for p in model.parameters()),
              "loss": history["loss"], "grad_norm": history["grad_norm"], "eval_steps": history["eval_steps"],
              "first_loss": history["loss"][0] if history["loss"] else None,
              "val_loss": history["val_loss"], "final_val": finite[-1] if finite else None,
              "final_train": tail_mean(history["loss"]),
              "stopped": history["stopped"], "seconds": history["seconds"]}
    if finite:
        result["diagnostics"] = final_diagnostics(model, s, context)
    return result, (model if keep_model else None)


def final_diagnostics(model, setting, context):
    """Seed 003's three early-warning figures on a trained model, over a fixed held-out batch:
    adjacent-position KL, each layer's attention entropy per head, and what every norm reads."""
    from . import diagnostics

    length = setting.get("train_length", setting["block_size"])
    idx, _ = sample_batch(context.data, length, 8, setting["seed"], context.device)
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            out = model(idx, collect=True)
        return {"adjacent_kl": diagnostics.adjacent_kl(out.logits),
                "attention_entropy": [diagnostics.attention_entropy(w) for w in out.attentions],
                "norm_inputs": diagnostics.norm_input_stats(model, idx)}
    finally:
        model.train(was_training)


def sample_batch(data, block_size, batch_size, seed, device, part="val"):
    """A fixed batch of windows (inputs, targets) from the held-out ids, for diagnostics."""
    generator = torch.Generator().manual_seed(seed)
    x, y = loop.get_batch(data[part], block_size, batch_size, generator)
    return x.to(device), y.to(device)


# --- files ----------------------------------------------------------------------------------


def labs_dir():
    """$HERO_LABS_DIR, else build/labs under the nearest folder above the working directory that
    holds pyproject.toml (the repository, from a notebook in course/labs), else ./build/labs."""
    if os.environ.get("HERO_LABS_DIR"):
        return Path(os.environ["HERO_LABS_DIR"])
    here = Path.cwd().resolve()
    for folder in (here, *here.parents):
        if (folder / "pyproject.toml").is_file():
            return folder / "build" / "labs"
    return here / "build" / "labs"


def _write_json(path, value):
    path.parent.mkdir(parents=True, exist_ok=True)
    scratch = path.with_name(f".{path.name}.{os.getpid()}.tmp")  # one per process: grids of one lab may run side by side
    scratch.write_text(json.dumps(value, ensure_ascii=False, indent=1), encoding="utf-8")
    scratch.replace(path)  # a run interrupted mid-write leaves no half file to resume from


def _stamp(lab):
    return f"{RUN_FORMAT}.{lab.version}"


def _finished(path, run, setting, stamp, source):
    """The stored result of `run`, or None when absent, made with other parameters or setting, on
    another corpus (a run on the fixture is not reused once the full corpus is there), or by an
    older version of the lab's code."""
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if (stored.get("params"), stored.get("setting"), stored.get("version"), stored.get("corpus")) \
            != (run.params, setting, stamp, source):
        return None
    return stored


# --- running a lab ----------------------------------------------------------------------------


def run_lab(lab, mode="quick", device="cpu", out=None, progress=True, fresh=False, log=print, table=True,
            scheduler="loop", address=None, resources=None):
    """Run (or resume) every run of `lab`'s grid in `mode`, judge its claims, draw its plots.
    Returns a Report.  fresh=True redoes finished runs; table=False leaves the claims table out of
    the log (a notebook shows it with labs.show).  scheduler: "loop" runs the grid in this process
    (a notebook's kernel), "ray" as Ray tasks (`hero lab run`; address: a cluster, else an
    embedded Ray)."""
    return run_labs([lab], mode, device, out=out, progress=progress, fresh=fresh, log=log, table=table,
                    scheduler=scheduler, address=address, resources=resources)[0]


def run_labs(chosen, mode="quick", device="cpu", out=None, progress=True, fresh=False, log=print, table=True,
             scheduler="loop", address=None, resources=None):
    """run_lab for several labs at once: every run of every grid is scheduled together, under one
    bar; a Report per lab.  out: only with one lab.  A run that fails or whose worker dies is
    reported and the others go on; the grid is then left unjudged (a rerun finishes it)."""
    from tqdm.auto import tqdm

    from . import grid

    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
    if device.startswith("cuda") and not torch.cuda.is_available() and address is None:
        raise RuntimeError("--device cuda: this machine has no CUDA device (torch.cuda.is_available() is False)")
    if out and len(chosen) != 1:
        raise ValueError("out names the folder of one lab's grid")
    start = time.perf_counter()
    data = corpus_data(os.environ.get("HERO_LAB_CORPUS", "auto"))
    folders = {lab.name: Path(out) if out else labs_dir() / lab.name / mode for lab in chosen}
    done, jobs, grids = {}, [], {}
    for lab in chosen:
        grids[lab.name], done[lab.name], todo = grid_state(lab, mode, folders[lab.name], data["source"], fresh)
        jobs += [grid.Job(lab, run, setting) for run, setting in todo]
        log(f"lab {lab.name} ({mode}, {device}, corpus: {data['source']}): {len(grids[lab.name])} runs, "
            f"{len(done[lab.name])} already done in {folders[lab.name]}")
    if data["source"] == "fixture" and mode != "tiny":
        log("note: training on the 300-poem fixture; `hero corpus fetch` gets seed 003's 4,003 poems, "
            "which the seed's figures are measured on")
    if jobs and scheduler != "loop":
        log(f"scheduling {len(jobs)} runs {grid.describe(scheduler, address)}")

    def finished(job, outcome):
        done[job.lab.name][job.run.key] = store_run(folders[job.lab.name], job.lab, job.run, job.setting, outcome,
                                                    device, data["source"])

    lost = []

    def failed(job, message):
        lost.append(job)
        bar.write(f"run {job.lab.name}/{job.run.key} lost: {message}")

    names = ", ".join(lab.name for lab in chosen)
    unit = "step" if any(run.cost > 1 for runs in grids.values() for run, _ in runs) else "run"  # labs that train count steps
    bar = tqdm(total=sum(job.run.cost for job in jobs), desc=names if len(chosen) == 1 else f"{len(chosen)} labs",
               unit=unit, disable=not progress or not jobs, dynamic_ncols=True, file=sys.stderr)
    try:
        grid.execute(jobs, data, device, finished, failed, bar, scheduler=scheduler, address=address,
                     resources=resources or grid.Resources())
    finally:
        bar.close()
    if lost:
        raise RuntimeError(f"{len(lost)} of {len(jobs)} runs were lost ({', '.join(f'{j.lab.name}/{j.run.key}' for j in lost)}); "
                           f"the {len(jobs) - len(lost)} others are saved: run the same command again to finish the grid")
    reports = []
    for lab in chosen:
        ran = sum(job.lab is lab for job in jobs)
        reports.append(_judge(lab, mode, device, folders[lab.name], data, grids[lab.name], done[lab.name], log, table,
                              f"({len(grids[lab.name]) - ran} reused) in {time.perf_counter() - start:.0f} s on {device}"))
    if len(chosen) > 1:
        held = sum(c["held"] is True for report in reports for c in report.claims)
        claims = sum(len(report.claims) for report in reports)
        log(f"{len(chosen)} labs ({mode}): {sum(len(g) for g in grids.values())} runs ({len(jobs)} run now) in "
            f"{time.perf_counter() - start:.0f} s {grid.describe(scheduler, address)}; {held} of {claims} claims held")
    return reports


def grid_state(lab, mode, folder, source, fresh=False):
    """(grid, done, todo) of lab's grid in `mode` stored under `folder`: every (Run, setting), the
    stored results that can be reused by run key, and the (Run, setting) pairs still to run."""
    runs = seeded_runs(lab.settings[mode], lab.runs)
    done, todo = {}, []
    for run, setting in runs:
        stored = None if fresh else _finished(folder / "runs" / f"{run.key}.json", run, setting, _stamp(lab), source)
        if stored is not None:
            done[run.key] = stored
        else:
            todo.append((run, setting))
    return runs, done, todo


def store_run(folder, lab, run, setting, outcome, device, source):
    """Write one finished run (grid.run_one's outcome) where a resumed grid finds it; returns it."""
    stored = {"key": run.key, "base": base_key(run.key), "seed": setting["seed"], "version": _stamp(lab),
              "params": run.params, "setting": setting, "result": outcome["result"], "seconds": outcome["seconds"],
              "device": device, "corpus": source, "threads": outcome["threads"]}
    _write_json(folder / "runs" / f"{run.key}.json", stored)
    return stored


def _judge(lab, mode, device, folder, data, runs, done, log, table, how):
    """The lab's results.json, claims and plots from its stored runs."""
    setting = lab.settings[mode]
    results = {"lab": lab.name, "mode": mode, "setting": setting, "seeds": setting["seeds"], "device": device,
               "corpus": data["source"], "baselines": {"uniform": data["uniform"], "unigram": data["unigram"]},
               "runs": {run.key: done[run.key] for run, _ in runs},
               "seconds": sum(done[run.key]["seconds"] for run, _ in runs),
               "torch": torch.__version__, "machine": platform.machine(),
               "threads": max(done[run.key].get("threads") or torch.get_num_threads() for run, _ in runs)}
    views = seed_views(results)
    results["claims"] = judge_claims(lab, views)
    folder.mkdir(parents=True, exist_ok=True)
    plots = [str(path) for path in lab.plot(views, folder)]
    results["plots"] = plots
    _write_json(folder / "results.json", results)
    report = Report(lab, mode, folder, results, plots)
    if table:
        log(report.table())
    held = sum(c["held"] is True for c in results["claims"])
    log(f"lab {lab.name} ({mode}): {len(runs)} run{'s' if len(runs) != 1 else ''} ({len(setting['seeds'])} seeds) {how}; "
        f"{held} of {len(results['claims'])} claims held; results in {folder}")
    return report


def seeded_runs(setting, runs):
    """[(Run, setting)]: every run of the grid once per seed, keyed `<run>_s<seed>`, with the
    setting that run executes (its own seed; the list of seeds left out, so that adding a seed
    reuses the runs already done)."""
    common = {k: v for k, v in setting.items() if k != "seeds"}
    return [(Run(seeded_key(run.key, seed), run.params, run.cost), {**common, "seed": seed})
            for seed in setting["seeds"] for run in runs(setting)]


def judge_claims(lab, views):
    """Every claim of the lab judged over its seed views: a list of JSON records."""
    found = []
    for claim in lab.claims:
        if claim.pooled:
            ours, checks = claim.judge(views)
            per_seed, texts = None, {"all": ours}
        else:
            judged = [claim.judge(view) for view in views]
            per_seed, texts, checks = [c for _, c in judged], {str(v["setting"]["seed"]): t for v, (t, _) in zip(views, judged)}, None
        records, verdict, held = evidence.summarise(per_seed, pooled=checks)
        found.append({"key": claim.key, "zh": claim.zh, "en": claim.en, "source": claim.source, "seed": claim.seed,
                      "per_seed": texts, "checks": records, "verdict": verdict, "held": held})
    return found


# the committed results: hero_transformer/labs/results/<mode>/<lab>.json, what `hero lab report`
# and docs/labs.md's claims table are made from on a fresh clone (written by `hero lab record`)
RECORDED = Path(__file__).resolve().parent / "results"
CURVES = ("loss", "grad_norm")  # per-step series: left out of a record (the plots need them, the verdicts do not)


def record(lab, mode):
    """Copy lab's finished results in `mode` (build/labs) into the committed folder, without the
    per-step curves and the verdicts (a report judges the runs again with the current claims).
    Returns the record's path."""
    report = load_report(lab, mode)
    if report is None:
        raise FileNotFoundError(f"no finished {mode} results of {lab.name} under {labs_dir()}: "
                                f"run `hero lab run {lab.name} --{mode}` first")
    if report.results.get("setting") != lab.settings[mode] or "seeds" not in report.results:
        raise ValueError(f"the {mode} results of {lab.name} were made with another setting than the lab's: "
                         f"run `hero lab run {lab.name} --{mode}` again")
    results = {k: v for k, v in report.results.items() if k not in ("plots", "claims")}
    results["runs"] = {key: {**stored, "result": compact(stored["result"])} for key, stored in results["runs"].items()}
    path = RECORDED / mode / f"{lab.name}.json"
    _write_json(path, results)
    return path


def compact(result):
    """A run's result without its per-step curves, keeping the final gradient norm they give."""
    kept = {k: v for k, v in result.items() if k not in CURVES}
    if "grad_norm" in result:
        kept["final_grad_norm"] = final_grad_norm(result)
    return kept


def recorded_results(lab, mode):
    """The committed results of lab in `mode` as stored (unjudged); None when there are none or
    they were made with another setting or grid than the lab's current one (a run added to the
    grid since, say, which the claims would look for)."""
    try:
        results = json.loads((RECORDED / mode / f"{lab.name}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    setting = lab.settings[mode]
    grid = {run.key: run.params for run, _ in seeded_runs(setting, lab.runs)}
    recorded = {key: stored.get("params") for key, stored in results.get("runs", {}).items()}
    return results if results.get("setting") == setting and recorded == grid else None


def load_recorded(lab, mode):
    """The committed results of lab in `mode`, judged now, as a Report (without plots); None as
    recorded_results."""
    results = recorded_results(lab, mode)
    if results is None:
        return None
    results["claims"] = judge_claims(lab, seed_views(results))
    return Report(lab, mode, RECORDED / mode, results, [])


def load_report(lab, mode="quick", out=None):
    """The saved results of a finished `run_lab`, or None."""
    folder = Path(out) if out else labs_dir() / lab.name / mode
    try:
        results = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return Report(lab, mode, folder, results, results.get("plots", []))


def default_mode():
    """The mode a lab notebook runs: $HERO_LAB_MODE (the test suite sets tiny), else quick."""
    return os.environ.get("HERO_LAB_MODE", "quick")


def runs_of(results, **match):
    """The results of the runs whose params contain `match`, in grid order."""
    return [r["result"] for r in results["runs"].values() if all(r["params"].get(k) == v for k, v in match.items())]


def one(results, **match):
    found = runs_of(results, **match)
    if len(found) != 1:
        raise KeyError(f"{len(found)} runs match {match}")
    return found[0]


# --- plots ----------------------------------------------------------------------------------


def figure(columns=1, width=5.2, height=3.6):
    """A matplotlib Figure without pyplot (no display backend needed) and its axes."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width * columns, height), layout="constrained")
    axes = fig.subplots(1, columns, squeeze=False)[0]
    return fig, list(axes)


def baselines(ax, results, legend=True):
    for name, style in (("uniform", ":"), ("unigram", "--")):
        ax.axhline(results["baselines"][name], color="grey", linestyle=style, linewidth=1,
                   label=f"{name} {results['baselines'][name]:.3f}" if legend else None)


def smooth(values, window=20):
    out, total = [], 0.0
    for i, v in enumerate(values):
        total += v
        if i >= window:
            total -= values[i - window]
        out.append(total / min(i + 1, window))
    return out


def save(fig, folder, name):
    path = Path(folder) / f"{name}.png"
    fig.savefig(path, dpi=110)
    return path


# --- the common lab shape: a grid of training runs ------------------------------------------------

# the seed's configuration (seed 003 §2.1: 12 layers, d 128, 4 heads, f 256, 64 positions, batch
# 32, AdamW (0.9, 0.95), lr 3e-3, 100 warmup steps, 1,200 steps), a quick one for 2 CPU cores
# (the same question, a quarter of the steps, half the width, half the batch), and a tiny one
# for the tests
SIZES = {
    "tiny": {"d_model": 16, "n_heads": 2, "d_ff": 32, "block_size": 16, "batch_size": 4, "n_layers": 2,
             "steps": 4, "warmup_steps": 1, "max_lr": 3e-3, "eval_every": 4, "seeds": [0, 1]},
    "quick": {"d_model": 64, "n_heads": 4, "d_ff": 128, "block_size": 64, "batch_size": 16, "n_layers": 6,
              "steps": 300, "warmup_steps": 25, "max_lr": 3e-3, "eval_every": 100, "seeds": [0, 1, 2]},
    "full": {"d_model": 128, "n_heads": 4, "d_ff": 256, "block_size": 64, "batch_size": 32, "n_layers": 12,
             "steps": 1200, "warmup_steps": 100, "max_lr": 3e-3, "eval_every": 100, "seeds": [0, 1, 2]},
}


def settings(per_mode=None, **common):
    """{mode: SIZES[mode] updated with `common` and then with per_mode[mode]}."""
    per_mode = per_mode or {}
    return {mode: {**size, **common, **per_mode.get(mode, {})} for mode, size in SIZES.items()}


def training_run(key, setting, variant=None, **overrides):
    """A Run that trains a LabLM with Variant(**variant) and the setting updated by overrides."""
    params = {"variant": dict(variant or {}), **overrides}
    return Run(key, params, cost=overrides.get("steps", setting["steps"]))


def train_run(run, setting, context, keep_model=False):
    """train_variant for a training_run: Variant(**params["variant"]), every other param an
    override of the setting (labels such as "placement" that no setting key reads are ignored)."""
    overrides = {k: v for k, v in run.params.items() if k != "variant"}
    return train_variant(setting, context, variants.Variant(**run.params["variant"]), keep_model=keep_model,
                         **overrides)


def execute_training(run, setting, context):
    return train_run(run, setting, context)[0]


def stalled(name, value, baseline, healthy):
    """Checks that `value` stopped near `baseline` compared with how far a healthy run got below
    it: within 40% of the healthy run's distance (relative, so that the seed's own figures, its
    stalled runs 0.3 below its unigram figure and its healthy ones 1.4, and ours are judged
    alike), given that the healthy run trained (the regime the claim is about)."""
    share = None if value is None or healthy is None or healthy >= baseline else (baseline - value) / (baseline - healthy)
    return [evidence.trained(f"{name}, healthy run", healthy, baseline),
            evidence.less(f"{name}: stalled run's distance below unigram / healthy run's", share, 0.4)]


def tail_mean(values, window=20):
    """The mean of the last `window` values: a final figure that one noisy step does not set."""
    tail = values[-window:]
    return sum(tail) / len(tail) if tail else None


def final_grad_norm(result):
    """A training run's gradient norm over its last 20 steps (a record keeps it, not the curve)."""
    return result["final_grad_norm"] if "final_grad_norm" in result else tail_mean(result["grad_norm"])


def fmt(value, digits=3):
    return "—" if value is None else f"{value:.{digits}f}"


def mean_of(values):
    """The mean of the values that are not None (a diverged run has no final loss), or nan."""
    finite = [v for v in values if v is not None]
    return sum(finite) / len(finite) if finite else math.nan


def plot_curves(views, folder, name, keys, labels=None, title=None, style=None):
    """Training loss (smoothed) of the runs `keys` of the first seed and their held-out points,
    with the baselines.  style(key) -> matplotlib line options, e.g. a colour per depth and a dash
    per placement."""
    results = views[0]
    fig, (ax,) = figure()
    for i, key in enumerate(keys):
        result = results["runs"][key]["result"]
        label = labels[i] if labels else key
        line, = ax.plot(smooth(result["loss"]), linewidth=1.2, label=f"{label}: {fmt(result['final_val'])}",
                        **(style(key) if style else {}))
        ax.plot(result["eval_steps"], result["val_loss"], "o", color=line.get_color(), markersize=3)
    baselines(ax, results)
    ax.set_xlabel("step")
    ax.set_ylabel("loss (nats); dots: held-out")
    ax.set_title(f"{title or name} (seed {results['setting']['seed']})")
    ax.legend(fontsize=7)
    return save(fig, folder, name)


def plot_finals(views, folder, name, xs, series, xlabel, log_base=None, title=None, ylabel="final held-out loss",
                extra=None, unigram=True):
    """Final figures against a grid axis: one line per label, the mean over the seeds with each
    seed's value as a dot, and (unigram=True, for losses) the unigram baseline.  series: {label: fn(view) -> [value per x]}.
    `log_base` 2 puts the grid values as ticks on a log2 axis, 10 a plain log axis."""
    results = views[0]
    fig, (ax,) = figure()
    for (label, values_of), marker in zip(series.items(), ("o-", "s-", "^-", "v-", "D-", "x-")):
        per_seed = [values_of(view) for view in views]
        means = [mean_of([values[i] for values in per_seed]) for i in range(len(xs))]
        line, = ax.plot(xs, means, marker, label=f"{label} (mean of {len(views)} seeds)")
        for values in per_seed:
            ax.plot(xs, [math.nan if v is None else v for v in values], ".", color=line.get_color(), alpha=0.5)
    if extra:
        extra(ax)
    if unigram:
        ax.axhline(results["baselines"]["unigram"], color="grey", linestyle="--", label="unigram")
    if log_base == 2:
        ax.set_xscale("log", base=2)
        ax.set_xticks(xs, [str(x) for x in xs])
    elif log_base:
        ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    ax.legend(fontsize=7)
    return save(fig, folder, name)

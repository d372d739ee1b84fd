"""The labs: seeds 003 and 004's experiments, rerun on the course's model and corpus.

Every module of this package that defines `LAB` (a runner.Lab) is a lab; `all_labs()` finds
them, so adding a lab touches no other file.  Run one with `hero lab run NAME --quick`, or from
its notebook in course/labs/ with `run(NAME)`.
"""

import importlib
import pkgutil
from functools import lru_cache

from . import evidence
from .runner import default_mode, figures_of, labs_dir, load_recorded, load_report, record, run_lab


@lru_cache(maxsize=None)
def all_labs():
    """{name: Lab}, in the order the course presents them."""
    found = []
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        if hasattr(module, "LAB"):
            found.append(module.LAB)
    return {lab.name: lab for lab in sorted(found, key=lambda lab: (lab.order, lab.name))}


def get(name):
    labs = all_labs()
    if name not in labs:
        raise KeyError(f"no lab named {name!r}; the labs are: {', '.join(labs)}")
    return labs[name]


def run(name, mode=None, device="cpu", **options):
    """Run (or resume) lab `name` in `mode` (default: $HERO_LAB_MODE, else quick); a Report."""
    options.setdefault("table", False)  # the notebook shows it, in Chinese, with show(report)
    return run_lab(get(name), mode or default_mode(), device, **options)


def saved(name, mode=None):
    """The saved Report of lab `name` in `mode`, or None when it has not been run."""
    return load_report(get(name), mode or default_mode())


def saved_any(name):
    """Whether lab `name` has saved results in any mode."""
    return any(load_report(get(name), mode) is not None for mode in get(name).settings)


def show(report, language="zh"):
    """In a notebook: the report's plots, then each claim with the seed's figure, ours and the
    verdict.  Elsewhere: the table only."""
    try:
        from IPython.display import Image, display
    except ImportError:
        display = None
    if display is not None:
        for path in report.plots:
            display(Image(filename=str(path)))
    print(report.table(language))


def mean_over_seeds(report, measure):
    """measure(view) -> a dict, for every seed of the report, combined: numbers by their mean over
    the seeds (a seed without a value, e.g. a diverged run, left out), anything else kept where
    every seed agrees and listed per seed where they differ; nested dicts, lists and tuples
    element by element."""
    return _combine([measure(view) for view in report.views()])


def _combine(values):
    first = values[0]
    if isinstance(first, dict):
        return {key: _combine([v.get(key) for v in values]) for key in first}
    if isinstance(first, (tuple, list)):
        return type(first)(_combine(list(parts)) for parts in zip(*values))
    numbers = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if numbers and len(numbers) == sum(v is not None for v in values):
        return sum(numbers) / len(numbers)
    return first if all(v == first for v in values) else values


SIZE_KEYS = ("n_layers", "d_model", "n_heads", "d_ff", "batch_size", "block_size", "steps", "warmup_steps", "max_lr",
             "eval_every", "seeds")


def describe_setting(setting, trains=True):
    """One mode's setting in a line: the model, the training, the seeds, then the lab's own grid."""
    s = setting
    line = f"{s['n_layers']}L d{s['d_model']} h{s['n_heads']} f{s['d_ff']} B{s['batch_size']} T{s['block_size']}, "
    line += f"{s['steps']} steps (warmup {s['warmup_steps']}), lr {s['max_lr']:g}" if trains else "no training"
    line += f"; seeds {s['seeds']}"
    own = [f"{key} {value}" for key, value in s.items() if key not in SIZE_KEYS]
    return line + "".join(f"; {part}" for part in own)


def settings_markdown(modes=("quick", "full")):
    """Every lab's setting per mode, as a markdown table (part of `hero lab report`)."""
    rows = ["| lab | " + " | ".join(modes) + " |", "|" + "---|" * (len(modes) + 1)]
    for lab in all_labs().values():
        trains = any(run.cost > 1 for run in lab.runs(lab.settings[modes[0]]))
        rows.append(f"| {lab.name} | " + " | ".join(describe_setting(lab.settings[m], trains) for m in modes) + " |")
    return "\n".join(rows) + "\n"


def claims_markdown(modes=("quick", "full"), source="recorded"):
    """A markdown table of every lab's claims: the seed's figure, then for each mode the number of
    seeds, every check over them (mean ± seed-to-seed sd [95% interval] against the claim) and the
    verdict; then each result's time and corpus.  source "recorded": the committed results
    (hero_transformer/labs/results/, judged now; docs/labs.md carries this output), "build": the
    results saved under build/labs by this machine's runs."""
    load = load_recorded if source == "recorded" else load_report
    header = ["lab", "claim", "seed", "seed's figure"]
    for mode in modes:
        header += [f"ours ({mode}): mean ± sd [95% interval] over the seeds", mode]
    rows = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    runs = []
    for lab in all_labs().values():
        reports = {mode: load(lab, mode) for mode in modes}
        for mode, report in reports.items():
            if report is not None:
                r = report.results
                runs.append(f"| {lab.name} | {mode} | {len(r['seeds'])} | {len(r['runs'])} | {r['seconds']:.0f} s | "
                            f"{r['device']} | {r['corpus']} | {r['threads']} |")
        for claim in lab.claims:
            cells = [lab.name, claim.en, claim.source, claim.seed]
            for mode, report in reports.items():
                found = next((c for c in report.claims if c["key"] == claim.key), None) if report else None
                if found is None:
                    cells += ["not run", "—"]
                    continue
                who, first = next(iter(found["per_seed"].items()), ("", ""))
                checks = [evidence.describe(check) for check in found["checks"]]
                cells += ["<br>".join([f"{len(report.seeds)} seeds; {figures_of(who)}: {first}", *checks]),
                          found["verdict"]]
            rows.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    timing = ["| lab | mode | seeds | runs | time (sum of runs) | device | corpus | threads |",
              "|---|---|---|---|---|---|---|---|", *runs]
    return "\n".join(rows) + "\n\n" + "\n".join(timing) + "\n"


def report_markdown(source="recorded"):
    """What `hero lab report` prints and docs/labs.md carries: every lab's settings, then every
    claim judged, then each result's time."""
    return f"### Settings\n\n{settings_markdown()}\n### Claims\n\n{claims_markdown(source=source)}"

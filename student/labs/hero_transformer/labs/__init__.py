"""The labs: seeds 003 and 004's experiments, rerun on the course's model and corpus.

Every module of this package that defines `LAB` (a runner.Lab) is a lab; `all_labs()` finds
them, so adding a lab touches no other file.  Run one with `hero lab run NAME --quick`, or from
its notebook in course/labs/ with `run(NAME)`.
"""

import importlib
import pkgutil
from functools import lru_cache

from .runner import default_mode, labs_dir, load_report, run_lab


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


def claims_markdown(modes=("quick", "full")):
    """A markdown table of every lab's claims: the seed's figure, ours in each mode that has been
    run (from the saved results), and whether it held; then each saved run's time and corpus.
    docs/labs.md carries its output (`hero lab report`)."""
    verdict = {True: "held", False: "not held", None: "undecided"}
    header = ["lab", "claim", "seed", "seed's figure"]
    for mode in modes:
        header += [f"ours ({mode})", f"{mode}"]
    rows = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    runs = []
    for lab in all_labs().values():
        reports = {mode: load_report(lab, mode) for mode in modes}
        for mode, report in reports.items():
            if report is not None:
                r = report.results
                runs.append(f"| {lab.name} | {mode} | {len(r['runs'])} | {r['seconds']:.0f} s | {r['device']} | "
                            f"{r['corpus']} | {r['threads']} |")
        for claim in lab.claims:
            cells = [lab.name, claim.en, claim.source, claim.seed]
            for mode, report in reports.items():
                found = next((c for c in report.claims if c["key"] == claim.key), None) if report else None
                cells += [found["ours"], verdict[found["held"]]] if found else ["not run", "—"]
            rows.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    timing = ["| lab | mode | runs | time (sum of runs) | device | corpus | threads |", "|---|---|---|---|---|---|---|", *runs]
    return "\n".join(rows) + "\n\n" + "\n".join(timing) + "\n"

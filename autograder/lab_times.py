"""How long a lab takes, as `hero lab list` says it.

Where a run of the lab in that mode is saved on this machine (build/labs/<name>/<mode>/results.json,
written by hero_transformer/labs/runner.py), its own figure; otherwise the committed measurement,
benchmarks/lab_times.json, written by benchmarks/lab_times.py with the machine it ran on.  A
measurement made for another setting of the mode than the lab's current one is not used.
"""

import json
from functools import lru_cache
from pathlib import Path

import fastjsonschema

from . import registry
from .progress import duration

MEASURED = registry.REPO_ROOT / "benchmarks" / "lab_times.json"

_SECONDS = {"type": "number", "exclusiveMinimum": 0}
SCHEMA = {
    "type": "object", "additionalProperties": False, "required": ["machine", "corpus", "method", "labs"],
    "properties": {
        # every entry was measured there (benchmarks/lab_times.py refuses to mix machines)
        "machine": {"type": "object", "additionalProperties": False,
                    "required": ["cpus", "torch_threads", "torch", "device"],
                    "properties": {"cpus": {"type": "integer", "minimum": 1},
                                   "torch_threads": {"type": "integer", "minimum": 1},
                                   "torch": {"type": "string"}, "device": {"enum": ["cpu", "cuda"]}}},
        "corpus": {"enum": ["full", "fixture"]},  # what the runs trained on (runner.corpus_data)
        "method": {"type": "string", "minLength": 40},
        # lab -> mode -> its measurement; a mode not there was not measured
        "labs": {"type": "object", "additionalProperties": {"type": "object", "additionalProperties": {
            "type": "object", "additionalProperties": False,
            "required": ["date", "load_average", "setting", "seconds", "runs", "timed_steps"],
            "properties": {"date": {"type": "string", "pattern": r"^\d{4}-\d\d-\d\d$"},
                           # the machine's 1-minute load before and after: how shared it was
                           "load_average": {"type": "array", "items": {"type": "number", "minimum": 0},
                                            "minItems": 2, "maxItems": 2},
                           "setting": {"type": "object"}, "seconds": _SECONDS,
                           "runs": {"type": "object", "minProperties": 1, "additionalProperties": _SECONDS},
                           # training steps each run was timed over (0: every run was run whole)
                           "timed_steps": {"type": "integer", "minimum": 0}}}}},
    },
}
check = fastjsonschema.compile(SCHEMA)


@lru_cache(maxsize=None)
def measured():
    """benchmarks/lab_times.json, schema-checked; {} when it is not there."""
    if not MEASURED.exists():
        return {}
    data = json.loads(MEASURED.read_text(encoding="utf-8"))
    try:
        check(data)
    except fastjsonschema.JsonSchemaException as exc:
        raise ValueError(f"{MEASURED}: {exc.message}") from None
    return data


def about(seconds):
    """A measured duration, as precise as a measurement on a shared machine is: 40 s, 4 min, 1 h 10 min."""
    if seconds < 90:
        return f"{max(10, round(seconds, -1)):.0f} s"
    minutes = round(seconds / 60)
    return f"{minutes} min" if minutes < 90 else f"{minutes // 60} h {minutes % 60:02d} min"


def describe(lab, mode):
    """The time of `lab` in `mode`: the saved run's, else the committed results' (a whole run of
    the grid, hero_transformer/labs/results/), else the committed estimate's, else 'not
    measured'.  A run's time is the sum of its runs' (what one core spends; Ray's start and the
    corpus load come on top, and parallel runs finish sooner)."""
    from hero_transformer.labs import load_report, runner

    setting = lab.settings[mode]
    saved = load_report(lab, mode)
    if saved is not None and saved.results.get("setting") == setting:
        r = saved.results
        where = saved.folder / "results.json"
        where = where.relative_to(Path.cwd()) if where.is_relative_to(Path.cwd()) else where
        return f"{duration(r['seconds'])} as run here ({r['device']}, {r['threads']} torch threads; {where})"
    recorded = runner.recorded_results(lab, mode)
    if recorded is not None:
        threads = recorded["threads"]
        return (f"{duration(recorded['seconds'])} summed over its {len(recorded['runs'])} runs, {threads} torch "
                f"thread{'s' if threads != 1 else ''} each, {recorded['device']} (the committed results)")
    data = measured()
    entry = data.get("labs", {}).get(lab.name, {}).get(mode)
    if entry is None or entry["setting"] != setting:
        return "time not measured"
    machine = data["machine"]
    threads, load = machine["torch_threads"], max(entry["load_average"])
    busy = f", under load {load:g}: slower than on an idle machine" if load > machine["cpus"] else ""
    return (f"about {about(entry['seconds'])} on a {machine['cpus']}-core {machine['device'].upper()}, "
            f"{threads} torch thread{'s' if threads != 1 else ''} (measured {entry['date']}{busy})")

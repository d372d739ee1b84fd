"""Every lab's time per mode, without running its whole grid: writes benchmarks/lab_times.json,
which `hero lab list` reads (autograder/lab_times.py; its schema is checked there).

Times are CPU seconds of this process (time.process_time), with --threads torch threads (1 by
default): on a machine others are busy on, wall time says more about them than about the lab
(under `nice -n 15` beside busy processes an estimate came out 16 times a saved real run), while
one thread's CPU time is what the lab costs on one free core.  `hero lab list` states the thread
count with the figure.

Each run of a lab's grid is executed by the lab's own code (`run_lab` with the lab's `execute`)
on a shortened setting: the same models, batches, corpus and number of held-out evaluations as
the real run, but STEPS_PER_EVAL training steps per evaluation (at least MIN_STEPS) instead of
the setting's `steps`.  A run's time is the shortened run's time plus its missing steps at the
median time per step (the gaps between the training loop's `on_step` calls, a third of which
hold an evaluation); the mode's time adds what `run_lab` spends around the runs (the claims, the
plots) and loading the corpus.  A mode whose runs have no more steps than that (tiny), and a run
that trains nothing (a profile at initialisation), is simply run.  Only the first seed's runs are
timed: every seed runs the same models for the same steps, so each other seed's run is given its
first-seed twin's time.

    nice -n 15 .venv/bin/python benchmarks/lab_times.py [--modes quick full tiny]

Each lab and mode measured replaces its entry; the others stay (all measured on one machine and
corpus: the script refuses to mix them).  Full mode is mostly the seed's configuration (36
timed steps per run at its size): it is not measured by default, and `hero lab list` says "time
not measured" for a mode without an entry.
"""

import argparse
import datetime
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

from autograder import lab_times
from hero_transformer import labs
from hero_transformer.labs import runner

STEPS_PER_EVAL = 3
MIN_STEPS = 6
METHOD = __doc__.split("\n\n")[1].replace("\n", " ")


def evaluations(steps, eval_every):
    return steps // eval_every + (1 if steps % eval_every else 0)


def shortened(setting):
    """(the setting with fewer steps and the same number of evaluations, its steps), or (setting, 0)
    when it has no more steps than that."""
    steps = setting["steps"]
    count = evaluations(steps, setting.get("eval_every", steps))
    every = STEPS_PER_EVAL if count > 1 else max(MIN_STEPS, STEPS_PER_EVAL)
    short = max(count * STEPS_PER_EVAL, MIN_STEPS)
    if steps <= short:
        return setting, 0
    return {**setting, "steps": short, "eval_every": every, "warmup_steps": warmup(setting["warmup_steps"], steps, short)}, short


def warmup(steps_of_warmup, steps, short):
    """The same share of the run (the schedule refuses a warmup longer than the run)."""
    return min(short, round(steps_of_warmup * short / steps))


def measure(lab, mode, scratch):
    real = lab.settings[mode]
    setting, timed_steps = shortened(real)
    seeds = real["seeds"]
    costs = {run.key: run.cost for run, _ in runner.seeded_runs({**real, "seeds": seeds[:1]}, lab.runs)}
    if any({"steps", "eval_every"} & set(run.params) for run in lab.runs(real)):
        raise NotImplementedError(f"{lab.name}: a run that sets its own steps; teach benchmarks/lab_times.py")
    timings, executed, trained = {}, [], []

    def execute(run, run_setting, context):
        if timed_steps and "warmup_steps" in run.params:  # a run's own warmup (the warmup lab's grid), shortened
            # alike; what run_lab stores and the claims read keep the grid's value
            run = runner.Run(run.key, {**run.params, "warmup_steps": warmup(run.params["warmup_steps"], real["steps"],
                                                                           timed_steps)}, run.cost)
        calls = []
        on_step = context.on_step
        context.on_step = lambda step, loss: (calls.append(time.process_time()), on_step(step, loss))
        start = time.process_time()
        result = lab.execute(run, run_setting, context)
        seconds = time.process_time() - start
        executed.append(seconds)
        trained.extend(calls[:1])
        gaps = [b - a for a, b in zip(calls, calls[1:])]
        per_step = statistics.median(gaps) if gaps else 0.0
        timings[run.key] = seconds + max(0, costs[run.key] - len(calls)) * per_step if calls else seconds
        return result

    timed = runner.Lab(**{**lab.__dict__, "settings": {**lab.settings, mode: {**setting, "seeds": seeds[:1]}},
                          "execute": execute})
    start = time.process_time()
    runner.run_lab(timed, mode, out=Path(scratch) / lab.name / mode, progress=False, fresh=True, log=lambda line: None)
    around = time.process_time() - start - sum(executed)  # claims, plots, files
    timings = {runner.seeded_key(runner.base_key(key), seed): seconds for key, seconds in timings.items() for seed in seeds}
    return {"setting": real, "seconds": sum(timings.values()) + around, "runs": timings,
            "timed_steps": timed_steps if trained else 0}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modes", nargs="+", default=["quick"], choices=runner.MODES)
    parser.add_argument("--labs", nargs="+", default=list(labs.all_labs()), choices=list(labs.all_labs()),
                        help="default: every lab")
    parser.add_argument("--threads", type=int, default=1,
                        help=f"torch threads (default 1: its CPU time is the time on a free core; `hero lab run` "
                             f"uses {torch.get_num_threads()} here)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    machine = {"cpus": os.cpu_count(), "torch_threads": args.threads, "torch": torch.__version__, "device": "cpu"}
    start = time.process_time()
    corpus = runner.corpus_data(os.environ.get("HERO_LAB_CORPUS", "auto"))["source"]
    corpus_seconds = time.process_time() - start  # every `hero lab run` loads it once
    data = lab_times.measured()
    if data and (data["machine"], data["corpus"]) != (machine, corpus):
        sys.exit(f"{lab_times.MEASURED} was measured on {data['machine']} with the {data['corpus']} corpus, this is "
                 f"{machine} with the {corpus} corpus: move it away to start a new one")
    data = {"machine": machine, "corpus": corpus, "method": METHOD, "labs": data.get("labs", {}) if data else {}}
    with tempfile.TemporaryDirectory(prefix="hero-lab-times-") as scratch:
        for name in args.labs:
            for mode in args.modes:
                before = os.getloadavg()[0]
                entry = measure(labs.get(name), mode, scratch)
                entry = {"date": datetime.date.today().isoformat(),
                         "load_average": [round(before, 1), round(os.getloadavg()[0], 1)], **entry,
                         "seconds": entry["seconds"] + corpus_seconds}
                data["labs"].setdefault(name, {})[mode] = entry
                lab_times.check(data)
                lab_times.MEASURED.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")  # after every lab
                steps = f"{entry['timed_steps']} timed steps per run" if entry["timed_steps"] else "run whole"
                print(f"{name:<18} {mode:<6} {len(entry['runs']):>3} run{'s' if len(entry['runs']) != 1 else ' '}  {entry['seconds']:8.1f} s  ({steps}; "
                      f"load average {entry['load_average'][0]} -> {entry['load_average'][1]})", flush=True)
    print(f"wrote {lab_times.MEASURED} ({machine['cpus']} CPUs, {machine['torch_threads']} torch threads)")


if __name__ == "__main__":
    main()

"""Every lab's full grid (the seed's configuration) on one GPU machine, then their records.

    python3 benchmarks/full_grids.py [--mode full] [--device cuda] [--jobs 12] [--deadline S] [--out DIR]

For a lent GPU machine, which has PyTorch, SciPy, tqdm and matplotlib but not Ray and no network.
By default it runs the labs that have no committed record in this mode yet (--labs names others),
cheapest first (layers x steps), so that a short lease finishes whole labs.  First each lab's
first tiny run is tried on the device (seconds): a lab that fails there is named and left out, so
a bug that shows only on CUDA does not eat the lease.  Then every run that has no stored result
is one process, --jobs of them at a time, all sharing the one GPU; each writes its run to
build/labs as `hero lab run` would, so a grid cut short resumes where it stopped.  With --deadline
no run starts after that many seconds and those still going then are killed (lost; the rest are
kept).  Every lab whose grid is then complete is judged (every run reused) and recorded into
hero_transformer/labs/results/<mode>/; OUT/records.tar.gz holds those records, every stored run
of the chosen labs (complete or not, to resume elsewhere) and times.json (each run's seconds).
The corpus must be cached where $HERO_CACHE points (`hero corpus fetch` here, then carry it).

On this machine `--mode tiny --device cpu` checks the mechanics in about a minute.  On a lent GPU:

    mkdir -p build/hero-cache && cp -r ~/.cache/hero_transformer/chinese-poetry-2.0.1 build/hero-cache/   # here
    # there (carry build/hero-cache, 25 MB, and build/labs to resume):
    HERO_CACHE=build/hero-cache PYTHONUNBUFFERED=1 python3 benchmarks/full_grids.py --deadline 500 --out $OUT
    # back here, in the repository: tar xzf <files_at>/records.tar.gz && .venv/bin/hero lab report
"""

import argparse
import concurrent.futures
import json
import os
import signal
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# one run in its own process: it finds its (Run, setting) in the lab's grid and stores the result
ONE_RUN = """
import os, sys
from hero_transformer import labs
from hero_transformer.labs import grid, runner
lab, mode, device, key = labs.get(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
data = runner.corpus_data(os.environ.get("HERO_LAB_CORPUS", "auto"))
folder = runner.labs_dir() / lab.name / mode
for run, setting in runner.grid_state(lab, mode, folder, data["source"])[2]:
    if run.key == key:
        outcome = grid.run_one(lab, run, setting, data, device, 1, lambda step, loss: None)
        runner.store_run(folder, lab, run, setting, outcome, device, data["source"])
"""


def smoke(chosen, device, jobs):
    """Each lab's first tiny run on `device`, in a scratch folder, all at once: a lab that breaks
    there (say, a tensor left on the CPU) costs seconds, not a lease's worth of full runs.
    Returns {lab name: the end of its error} for the labs that failed."""
    from hero_transformer.labs import runner

    with tempfile.TemporaryDirectory() as scratch:
        env = {**os.environ, "HERO_LABS_DIR": scratch}

        def first_run(lab):
            run, _ = runner.seeded_runs(lab.settings["tiny"], lab.runs)[0]
            done = subprocess.run([sys.executable, "-c", ONE_RUN, lab.name, "tiny", device, run.key], cwd=ROOT, env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=300)
            return lab.name, done.returncode, done.stderr.strip().splitlines()[-1:] or [""]

        with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
            return {name: last[0] for name, code, last in pool.map(first_run, chosen) if code}


def layer_steps(run, setting):
    """What a run costs on a GPU, where small models are bound by kernel launches: layers x steps."""
    return (run.params.get("n_layers") or setting.get("n_layers") or 1) * max(run.cost, 1)


class Runner:
    """Starts one process per run and kills the ones still going at the deadline."""

    def __init__(self, mode, device, deadline):
        self.mode, self.device, self.deadline = mode, device, deadline
        self.began = time.monotonic()
        self.lock = threading.Lock()
        self.live = set()
        self.stopped = False

    def left(self):
        return None if self.deadline is None else self.deadline - (time.monotonic() - self.began)

    def __call__(self, task):
        name, key = task
        with self.lock:
            if self.stopped or (self.left() is not None and self.left() <= 0):
                return name, key, "not started", 0.0, ""
            process = subprocess.Popen([sys.executable, "-c", ONE_RUN, name, self.mode, self.device, key], cwd=ROOT,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                       start_new_session=True)
            self.live.add(process)
        began = time.monotonic()
        try:
            _, err = process.communicate(timeout=self.left())
            state = "ok" if process.returncode == 0 else "FAILED"
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            _, err = process.communicate()
            state = "killed at the deadline"
        with self.lock:
            self.live.discard(process)
        return name, key, state, time.monotonic() - began, (err or "")[-2000:]

    def stop(self):
        with self.lock:
            self.stopped = True
            for process in self.live:
                os.killpg(process.pid, signal.SIGKILL)


def gpu_busy(samples, stop):
    """Sample the GPU's utilisation every 5 s (what a person would ask: was the GPU kept busy?)."""
    import torch

    while not stop.wait(5):
        try:
            samples.append(torch.cuda.utilization())
        except Exception:  # no NVML here: nothing to sample
            return


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", default="full")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--jobs", type=int, default=12, help="processes at a time (default 12: 16 cores, one GPU)")
    parser.add_argument("--deadline", type=float, help="seconds after which no run starts and running ones are killed")
    parser.add_argument("--labs", nargs="+", help="default: the labs with no committed record in --mode, cheapest first")
    parser.add_argument("--out", default=os.environ.get("OUT", "build"), help="where records.tar.gz goes")
    args = parser.parse_args()

    import torch

    from hero_transformer import labs
    from hero_transformer.labs import runner

    if args.device == "cuda" and not torch.cuda.is_available():
        print("full grids: no GPU here (torch.cuda.is_available() is False); nothing run")
        return 0
    data = runner.corpus_data(os.environ.get("HERO_LAB_CORPUS", "auto"))
    if args.mode != "tiny" and data["source"] != "full":
        sys.exit("full grids: the full corpus is not cached (set HERO_CACHE to a folder `hero corpus fetch` filled)")
    chosen = ([labs.get(name) for name in args.labs] if args.labs else
              [lab for lab in labs.all_labs().values() if not (runner.RECORDED / args.mode / f"{lab.name}.json").exists()])
    broken = smoke(chosen, args.device, args.jobs)
    for name, error in broken.items():
        print(f"{name}: its first tiny run fails on {args.device}, so its grid is left out: {error}", flush=True)
    chosen = [lab for lab in chosen if lab.name not in broken]
    state = {lab.name: runner.grid_state(lab, args.mode, runner.labs_dir() / lab.name / args.mode, data["source"])
             for lab in chosen}
    if not args.labs:
        chosen.sort(key=lambda lab: sum(layer_steps(run, setting) for run, setting in state[lab.name][0]))
    tasks = [(lab.name, run.key) for lab in chosen for run, _ in state[lab.name][2]]
    where = torch.cuda.get_device_name() if args.device == "cuda" else args.device
    print(f"full grids ({args.mode}) on {where}, torch {torch.__version__}: {len(tasks)} runs to do in "
          f"{sum(bool(state[lab.name][2]) for lab in chosen)} labs, {args.jobs} at a time"
          + (f", deadline {args.deadline:.0f} s" if args.deadline else ""), flush=True)

    runner_ = Runner(args.mode, args.device, args.deadline)
    samples, sampling = [], threading.Event()
    if args.device == "cuda":
        threading.Thread(target=gpu_busy, args=(samples, sampling), daemon=True).start()
    times, outcomes = {}, {}
    try:
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            for name, key, outcome, seconds, err in pool.map(runner_, tasks):
                outcomes[outcome] = outcomes.get(outcome, 0) + 1
                if outcome == "not started":
                    continue
                times[f"{name}/{key}"] = round(seconds, 1)
                print(f"{time.monotonic() - runner_.began:6.0f} s  {name}/{key}: {outcome} in {seconds:.0f} s", flush=True)
                if outcome == "FAILED":
                    print(err, file=sys.stderr)
    finally:
        runner_.stop()
        sampling.set()
    grids = time.monotonic() - runner_.began

    records, unfinished = [], []
    for lab in chosen:
        runs, done, todo = runner.grid_state(lab, args.mode, runner.labs_dir() / lab.name / args.mode, data["source"])
        if todo:
            unfinished.append(f"{lab.name} ({len(done)} of {len(runs)} runs)")
            continue
        report = runner.run_lab(lab, args.mode, args.device, progress=False, log=lambda line: None, table=False)
        records.append(labs.record(lab, args.mode))
        print(f"{lab.name:<18} {sum(c['held'] is True for c in report.claims)} of {len(report.claims)} claims held; "
              f"runs {report.results['seconds']:.0f} s summed", flush=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "times.json").write_text(json.dumps({"device": where, "jobs": args.jobs, "wall": round(grids, 1),
                                                "gpu_utilisation": samples, "runs": times}, indent=1))
    with tarfile.open(out / "records.tar.gz", "w:gz") as tar:
        for path in records:
            tar.add(path, arcname=f"hero_transformer/labs/results/{args.mode}/{path.name}")
        for lab in chosen:
            for path in sorted((runner.labs_dir() / lab.name / args.mode / "runs").glob("*.json")):
                tar.add(path, arcname=f"build/labs/{lab.name}/{args.mode}/runs/{path.name}")
        tar.add(out / "times.json", arcname="build/labs/times.json")
    busy = f", GPU busy {sum(samples) / len(samples):.0f}% on average" if samples else ""
    print(f"full grids ({args.mode}, {where}): {len(tasks)} runs to do, "
          + (", ".join(f"{n} {state_}" for state_, n in outcomes.items()) or "none") + f" in {grids:.0f} s{busy}; "
          f"{len(records)} labs recorded" + (f"; unfinished: {', '.join(unfinished)}" if unfinished else ""))
    return 1 if outcomes.get("FAILED") or broken else 0


if __name__ == "__main__":
    sys.exit(main())

"""Every lab's full grid (the seed's configuration) on one GPU machine, then their records.

    python3 benchmarks/full_grids.py [--mode full] [--device cuda] [--jobs 14] [--out DIR]

For a lent GPU machine, which has PyTorch, SciPy, tqdm and matplotlib but not Ray and no network:
the grids run as one process per (lab, seed), --jobs of them at a time, all sharing the one GPU
(the models are so small that one run leaves it nearly idle); each process runs its seed's runs
in a loop and writes them to build/labs as `hero lab run` would.  Then each lab is judged once
over all its seeds (every run reused) and recorded into hero_transformer/labs/results/<mode>/,
and the records are packed into OUT/records.tar.gz (the one file that comes back).  The corpus
must be cached where $HERO_CACHE points (`hero corpus fetch` here, then carry the folder).

On this machine `--mode tiny --device cpu` checks the mechanics in about a minute.  On a lent GPU:

    mkdir -p build/hero-cache && cp -r ~/.cache/hero_transformer/chinese-poetry-2.0.1 build/hero-cache/   # here
    # there (carry build/hero-cache, 25 MB):
    HERO_CACHE=build/hero-cache PYTHONUNBUFFERED=1 python3 benchmarks/full_grids.py --out $OUT
    # back here: tar xzf <files_at>/records.tar.gz && .venv/bin/hero lab report
"""

import argparse
import concurrent.futures
import os
import subprocess
import sys
import tarfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

ONE_SEED = """
import dataclasses, sys
from hero_transformer import labs
from hero_transformer.labs import runner
lab = labs.get(sys.argv[1])
mode, device, seed = sys.argv[2], sys.argv[3], int(sys.argv[4])
lab = dataclasses.replace(lab, settings={**lab.settings, mode: {**lab.settings[mode], "seeds": [seed]}})
runner.run_lab(lab, mode, device, progress=False, log=lambda line: None, table=False)
"""


def one_seed(name, mode, device, seed):
    began = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", ONE_SEED, name, mode, device, str(seed)], cwd=ROOT,
                          capture_output=True, text=True)
    return name, seed, done.returncode, time.perf_counter() - began, done.stderr[-2000:]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", default="full")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--jobs", type=int, default=14, help="processes at a time (default 14: 16 cores, one GPU)")
    parser.add_argument("--labs", nargs="+", help="default: every lab")
    parser.add_argument("--out", default=os.environ.get("OUT", "build"), help="where records.tar.gz goes")
    args = parser.parse_args()

    import torch

    from hero_transformer import labs
    from hero_transformer.labs import runner

    if args.device == "cuda" and not torch.cuda.is_available():
        print("full grids: no GPU here (torch.cuda.is_available() is False); nothing run")
        return 0
    chosen = [labs.get(name) for name in args.labs] if args.labs else list(labs.all_labs().values())
    if args.mode != "tiny" and runner.corpus_data("auto")["source"] != "full":
        sys.exit("full grids: the full corpus is not cached (set HERO_CACHE to a folder `hero corpus fetch` filled)")
    tasks = [(lab.name, seed) for lab in chosen for seed in lab.settings[args.mode]["seeds"]]
    began = time.perf_counter()
    failed = []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for name, seed, code, seconds, err in pool.map(lambda task: one_seed(task[0], args.mode, args.device, task[1]),
                                                      tasks):
            print(f"{name:<18} seed {seed}: {'ok' if code == 0 else 'FAILED'} in {seconds:.0f} s", flush=True)
            if code:
                failed.append((name, seed))
                print(err, file=sys.stderr)
    grids = time.perf_counter() - began
    records = []
    for lab in chosen:
        if any(name == lab.name for name, _ in failed):
            continue
        report = runner.run_lab(lab, args.mode, args.device, progress=False, log=lambda line: None, table=False)
        records.append(labs.record(lab, args.mode))
        print(f"{lab.name:<18} {sum(c['held'] is True for c in report.claims)} of {len(report.claims)} claims held; "
              f"runs {report.results['seconds']:.0f} s summed", flush=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with tarfile.open(out / "records.tar.gz", "w:gz") as tar:
        for path in records:
            tar.add(path, arcname=str(path.relative_to(ROOT)))
    print(f"full grids ({args.mode}, {args.device}): {len(tasks)} seed grids of {len(chosen)} labs in {grids:.0f} s, "
          f"{len(failed)} failed; {len(records)} records in {out / 'records.tar.gz'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""What Ray costs a lab grid: the same grid in the plain loop and as Ray tasks, side by side.

One grid (a lab's tiny setting with more steps, so that each run trains for a few seconds) is run
three ways, each from scratch into its own folder, with one torch thread per run:

  loop          the grid in this process, one run after another (`hero lab run --loop`)
  ray, 1 CPU    an embedded Ray offering one CPU: the same serial work, plus Ray's start and tasks
  ray, N CPUs   an embedded Ray offering every core: runs in parallel

and prints wall times, the overhead of Ray on one CPU against the loop, and the speed-up on N.

    .venv/bin/python benchmarks/lab_scheduling.py [--lab residual_ablation] [--steps 300]
"""

import argparse
import dataclasses
import os
import subprocess
import sys
import tempfile
import time

SNIPPET = """
import dataclasses, json, sys, time, torch
from hero_transformer import cluster, labs
from hero_transformer.labs import runner
name, steps, out, how, cpus = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5])
lab = labs.get(name)
lab = dataclasses.replace(lab, settings={**lab.settings, "tiny": {**lab.settings["tiny"], "steps": steps,
                                                                   "eval_every": steps}})
torch.set_num_threads(1)
start = time.perf_counter()
if how == "loop":
    runner.run_lab(lab, "tiny", out=out, progress=False, log=lambda line: None, scheduler="loop")
else:
    with cluster.session(num_cpus=cpus):
        runner.run_lab(lab, "tiny", out=out, progress=False, log=lambda line: None, scheduler="ray")
print(json.dumps({"seconds": time.perf_counter() - start, "runs": len(lab.runs(lab.settings["tiny"]))}))
"""


def measure(lab, steps, how, cpus, scratch):
    """Seconds of one fresh run of the grid in a fresh process (import and corpus excluded)."""
    import json

    out = os.path.join(scratch, f"{how}-{cpus}")
    env = {**os.environ, "HERO_LAB_CORPUS": os.environ.get("HERO_LAB_CORPUS", "fixture")}
    done = subprocess.run([sys.executable, "-c", SNIPPET, lab, str(steps), out, how, str(cpus)], env=env,
                          capture_output=True, text=True, check=False)
    if done.returncode:
        sys.exit(done.stderr[-3000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lab", default="residual_ablation")
    parser.add_argument("--steps", type=int, default=300, help="training steps of each run (default 300)")
    args = parser.parse_args()
    cores = os.cpu_count()
    with tempfile.TemporaryDirectory(prefix="hero-lab-sched-") as scratch:
        loop = measure(args.lab, args.steps, "loop", 1, scratch)
        one = measure(args.lab, args.steps, "ray", 1, scratch)
        many = measure(args.lab, args.steps, "ray", cores, scratch)
    runs = loop["runs"]
    print(f"{args.lab}, tiny setting with {args.steps} steps a run, {runs} runs, 1 torch thread a run, "
          f"load average {os.getloadavg()[0]:.1f}")
    print(f"  loop          {loop['seconds']:7.1f} s")
    print(f"  ray, 1 CPU    {one['seconds']:7.1f} s   overhead {one['seconds'] - loop['seconds']:+.1f} s "
          f"({(one['seconds'] - loop['seconds']) / runs:+.2f} s a run, Ray's start included)")
    print(f"  ray, {cores} CPUs   {many['seconds']:7.1f} s   {loop['seconds'] / many['seconds']:.2f}x the loop")


if __name__ == "__main__":
    main()

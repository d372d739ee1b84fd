"""Executing a grid of lab runs: as Ray tasks (the default), or in a plain loop.

`execute(jobs, ...)` runs every job and calls `finished(job, stored)` in the driver as each run
ends, so the runner writes its file at once: a killed worker or driver loses only the runs in
flight.  A job is (lab, run, setting, data source); what crosses Ray is the lab's name, the run's
parameters and setting (JSON values), the corpus (tensors the driver loaded) and the stored
result (JSON values) coming back.

Each run declares what it needs: `cpus` (its torch threads) and, on CUDA, a fraction of a GPU, so
that several small models share one GPU.  One bar counts the steps of the whole grid; the tasks
report their steps to a small actor that the driver reads twice a second.
"""

import hashlib
import time
from dataclasses import dataclass
from pathlib import Path

import torch

SCHEDULERS = ("ray", "loop")
REPORT_EVERY = 0.5  # seconds between a task's step reports


@dataclass(frozen=True)
class Job:
    lab: object  # runner.Lab
    run: object  # runner.Run
    setting: dict  # the lab's setting with this run's seed


@dataclass(frozen=True)
class Resources:
    cpus: int = 1  # torch threads of one run
    gpus: float = 0.25  # the share of a GPU one run takes on CUDA (4 runs on one GPU)


def code_digest():
    """A digest of the package's Python files: a Ray node running other code is refused."""
    root = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def run_one(lab, run, setting, data, device, threads, on_step):
    """One run, timed, as the stored dict (without the driver's bookkeeping fields).  threads:
    torch's threads for it (None: leave them, as in a notebook's kernel)."""
    from .runner import Context

    if threads is not None:
        torch.set_num_threads(threads)
    torch.manual_seed(setting.get("seed", 0))
    began = time.perf_counter()
    result = lab.execute(run, setting, Context(device=device, data=data, on_step=on_step))
    return {"result": result, "seconds": time.perf_counter() - began, "threads": threads or torch.get_num_threads()}


def _remote_run(lab_name, run, setting, data, device, threads, progress, digest):
    """The Ray task: look the lab up by name in this node's package and run it."""
    from . import get

    if code_digest() != digest:
        raise RuntimeError(f"this Ray node runs other hero_transformer code (digest {code_digest()}, the driver's "
                           f"{digest}): install the same version on every node")
    sent, last = [0], [time.monotonic()]

    def on_step(step, loss):
        sent[0] += 1
        if time.monotonic() - last[0] >= REPORT_EVERY:
            progress.add.remote(f"{lab_name}/{run.key}", sent[0])
            sent[0], last[0] = 0, time.monotonic()

    return run_one(get(lab_name), run, setting, data, device, threads, on_step)


def execute(jobs, data, device, finished, failed, bar, scheduler="ray", address=None, resources=Resources()):
    """Run every job; finished(job, stored) for each as it ends; failed(job, message) for each that
    raised or whose worker died (the others go on).  bar: a tqdm bar over the jobs' costs."""
    if scheduler not in SCHEDULERS:
        raise ValueError(f"scheduler must be one of {SCHEDULERS}, not {scheduler!r}")
    if scheduler == "loop":
        for job in jobs:
            bar.set_postfix_str(job.run.key, refresh=True)
            before = bar.n
            stored = run_one(job.lab, job.run, job.setting, data, device, None,
                             lambda step, loss: bar.update(1))
            bar.update(max(0, before + job.run.cost - bar.n))  # runs that stopped early, or count no steps
            finished(job, stored)
        return
    _execute_on_ray(jobs, data, device, finished, failed, bar, address, resources)


def _execute_on_ray(jobs, data, device, finished, failed, bar, address, resources):
    from .. import cluster

    gpus = resources.gpus if device.startswith("cuda") else 0
    with cluster.session(address=address) as ray:
        progress = ray.remote(num_cpus=0)(_Progress).remote()
        task = ray.remote(_remote_run).options(num_cpus=resources.cpus, num_gpus=gpus, max_retries=0)
        shared = ray.put(data)  # the corpus once, not once per run
        digest = code_digest()
        pending = {task.remote(job.lab.name, job.run, job.setting, shared, device, resources.cpus, progress,
                               digest): job for job in jobs}
        credited = 0  # steps of the runs that ended
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=len(pending), timeout=REPORT_EVERY)
            for ref in ready:
                job = pending.pop(ref)
                credited += job.run.cost
                try:
                    stored = ray.get(ref)
                except ray.exceptions.RayError as exc:
                    failed(job, _one_line(exc))
                    continue
                finished(job, stored)
            reported = ray.get(progress.read.remote())
            running = sum(min(reported.get(f"{job.lab.name}/{job.run.key}", 0), job.run.cost) for job in pending.values())
            bar.n = min(bar.total, credited + running)
            bar.set_postfix_str(f"{len(pending)} running or queued", refresh=False)
            bar.refresh()


class _Progress:
    """Steps reported by the running tasks, by lab/run key (a Ray actor)."""

    def __init__(self):
        self.steps = {}

    def add(self, key, steps):
        self.steps[key] = self.steps.get(key, 0) + steps

    def read(self):
        return self.steps


def _one_line(exc):
    text = str(exc).strip().splitlines()
    cause = next((line for line in reversed(text) if line.strip()), type(exc).__name__)
    return f"{type(exc).__name__}: {cause.strip()}"


def describe(scheduler, address):
    if scheduler == "loop":
        return "in this process"
    return f"on the Ray cluster at {address}" if address else "on an embedded Ray"


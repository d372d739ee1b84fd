"""A class graded on a Ray cluster (`hero autograde --address`, or `ray_address` in
nbgrader_config.py; docs/grading.md, "A whole class at once").

One `Grader` actor per node runs the trusted grading process there, with its own pool of
sandboxed workers (autograder/sandbox.py), exactly as `nbgrader autograde` does on one machine.
Only plain data crosses Ray: each submission goes out as its files' bytes (the autograded
folder, which nbgrader's safe copy left with regular files only) and comes back as the JSON of
its report, which the driver reads as data (`engine.Report.from_json`).  Nothing built by student
code is ever unpickled by the driver.  Ray is joined through hero_transformer/cluster.py, the
project's one way in; there is no embedded Ray here: without an address the class is graded in
the nbgrader process's own pool.
"""

import os
import tempfile
from pathlib import Path

from . import engine, safefiles

CHUNKS_PER_NODE = 4  # submissions go out in this many chunks per node: the bar moves, and a fast node takes more


class Grader:
    """The grading process of one node: a worker pool started once, many chunks graded."""

    def __init__(self, size):
        from .sandbox import WorkerPool

        self.pool = WorkerPool(size=size)

    def grade(self, chunk, timeout):
        """chunk: [(assignment id, {relative path: bytes})]; returns their reports as JSON."""
        with tempfile.TemporaryDirectory(prefix="hero-ray-grade-") as scratch:
            folders = []
            for number, (assignment, files) in enumerate(chunk):
                folder = Path(scratch, str(number), assignment)  # named as nbgrader's autograded/<student>/<assignment>
                for relpath, data in files.items():
                    path = folder / relpath
                    if ".." in Path(relpath).parts or Path(relpath).is_absolute():
                        raise ValueError(f"refused path {relpath!r}")
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_bytes(data)
                folders.append(folder)
            os.chmod(scratch, 0o755)  # the sandbox's own uid reads it
            reports = engine.grade_many(folders, [assignment for assignment, _ in chunk], pool=self.pool,
                                        timeout=timeout)
            return [report.to_json() for report in reports]


def read_folder(folder):
    """{relative path: bytes} of a folder's regular files, read without following links."""
    with safefiles.Folder(folder) as opened:
        found, _ = opened.files("", "", max_files=10_000)
        return {relpath: opened.read(relpath, 20_000_000) for relpath in found}


def grade(address, folders, assignment_ids, timeout, bar=None):
    """Every folder's report, graded on the cluster at `address`; in the order given."""
    from hero_transformer import cluster

    with cluster.session(address=address) as ray:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        nodes = [node for node in ray.nodes() if node["Alive"] and node["Resources"].get("CPU", 0) >= 1]
        remote = ray.remote(num_cpus=1)(Grader)
        actors = [remote.options(scheduling_strategy=NodeAffinitySchedulingStrategy(node["NodeID"], soft=False))
                  .remote(int(node["Resources"]["CPU"])) for node in nodes]
        if not actors:
            raise RuntimeError(f"the Ray cluster at {address} has no node with a CPU to grade on")
        size = max(1, len(folders) // (CHUNKS_PER_NODE * len(actors)))
        chunks = [list(range(start, min(start + size, len(folders)))) for start in range(0, len(folders), size)]
        reports, waiting, running = [None] * len(folders), list(reversed(chunks)), {}

        def send(actor):
            chunk = waiting.pop()
            payload = [(assignment_ids[i], read_folder(folders[i])) for i in chunk]
            running[actor.grade.remote(payload, timeout)] = (actor, chunk)

        for actor in actors:
            if waiting:
                send(actor)
        while running:
            [done], _ = ray.wait(list(running), num_returns=1)
            actor, chunk = running.pop(done)
            for index, data in zip(chunk, ray.get(done), strict=True):
                reports[index] = engine.Report.from_json(data)
            if bar is not None:
                bar.update(len(chunk))
            if waiting:
                send(actor)
        for actor in actors:
            ray.kill(actor)
        return reports

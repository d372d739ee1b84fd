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

import contextlib
import os
import queue
import tempfile
import threading
from concurrent.futures import Future
from pathlib import Path

from . import engine, registry, safefiles

QUEUED_PER_WORKER = 2  # submissions a node holds per sandboxed worker: it never waits for the next, a fast node takes more


class Grader:
    """The grading process of one node: a worker pool started once, many submissions graded, as
    many at once as Ray lets this actor run calls (its max_concurrency)."""

    def __init__(self, size):
        from .sandbox import WorkerPool

        self.pool = WorkerPool(size=size)
        self.grading = engine.Grading(self.pool)

    def grade(self, assignment, files, timeout):
        """files: {relative path: bytes} of one submission; returns its report as JSON."""
        with tempfile.TemporaryDirectory(prefix="hero-ray-grade-") as scratch:
            folder = Path(scratch, "submission", assignment)  # named as nbgrader's autograded/<student>/<assignment>
            for relpath, data in files.items():
                if ".." in Path(relpath).parts or Path(relpath).is_absolute():
                    raise ValueError(f"refused path {relpath!r}")
                path = folder / relpath
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
            os.chmod(scratch, 0o755)  # the sandbox's own uid reads it
            return self.grading.submit(folder, assignment, timeout).result().to_json()


SHIPPED_FILES = 10_000  # as nbgrader's safe copy, which made the folder


def read_folder(folder):
    """{relative path: bytes} of what grading reads in a submission folder, read without
    following links: its top-level notebooks (the assignment's, and the names of any other, which
    the report mentions) and the package's modules.  Nothing else crosses Ray: data or an
    environment beside the package costs nothing.  The node's engine applies its own limits to
    these files, exactly as it does here; a walk over a limit raises safefiles.TooLarge (loud,
    for this submission alone), never ships part of the package."""
    with safefiles.Folder(folder) as opened:
        notebooks, _ = opened.files("", ".ipynb", SHIPPED_FILES, enter=lambda relpath: False, strict=True)
        package, _ = opened.files(registry.PACKAGE, ".py", SHIPPED_FILES, strict=True)
        # a notebook up to the engine's cap on its file (the limit is on its content, checked on the node)
        return {**{relpath: opened.read(relpath, engine.MAX_NOTEBOOK_FILE_BYTES) for relpath in notebooks},
                **{relpath: opened.read(relpath, 20_000_000) for relpath in package}}


class Grading:
    """engine.Grading's interface on a Ray cluster: `submit` returns a future of the report.
    One thread here hands each submission to the node with room for it and reads the reports
    back; a submission whose node failed gets that failure as its future's exception."""

    def __init__(self, address, progress=None):
        from hero_transformer import cluster

        self.progress = progress
        self._session = contextlib.ExitStack()
        self.ray = ray = self._session.enter_context(cluster.session(address=address))
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        nodes = [node for node in ray.nodes() if node["Alive"] and node["Resources"].get("CPU", 0) >= 1]
        if not nodes:
            self._session.close()
            raise RuntimeError(f"the Ray cluster at {address} has no node with a CPU to grade on")
        self._room = {}  # actor -> how many more submissions it may hold
        for node in nodes:
            size = int(node["Resources"]["CPU"])
            actor = ray.remote(num_cpus=1, max_concurrency=QUEUED_PER_WORKER * size)(Grader).options(
                scheduling_strategy=NodeAffinitySchedulingStrategy(node["NodeID"], soft=False)).remote(size)
            self._room[actor] = QUEUED_PER_WORKER * size
        self._waiting, self._running = queue.Queue(), {}
        self._closing, self._cancel = threading.Event(), threading.Event()
        self._thread = threading.Thread(target=self._dispatch, daemon=True)
        self._thread.start()

    def submit(self, folder, assignment_id, timeout=engine.DEFAULT_TIMEOUT):
        result = Future()
        self._waiting.put((assignment_id, read_folder(folder), timeout, result))
        return result

    def _dispatch(self):
        held = []  # submissions taken from the queue that no node has room for yet
        while not (self._closing.is_set() and not held and not self._running and self._waiting.empty()):
            while True:
                try:
                    held.append(self._waiting.get_nowait())
                except queue.Empty:
                    break
            if self._cancel.is_set():
                for *_, result in held:
                    result.cancel()
                held = []
            for actor in self._room:
                while held and self._room[actor] > 0:
                    assignment, files, timeout, result = held.pop(0)
                    if result.set_running_or_notify_cancel():
                        self._running[actor.grade.remote(assignment, files, timeout)] = (actor, result)
                        self._room[actor] -= 1
            if not self._running:
                self._closing.wait(0.05)
                continue
            done, _ = self.ray.wait(list(self._running), num_returns=1, timeout=0.05)
            for ref in done:
                actor, result = self._running.pop(ref)
                self._room[actor] += 1
                try:
                    result.set_result(engine.Report.from_json(self.ray.get(ref)))
                except Exception as exc:  # the node or its grader failed: that submission says so
                    result.set_exception(exc)
                if self.progress is not None:
                    self.progress.update(1)

    def close(self, cancel=False):
        """Wait for every submission handed in (`cancel`: drop those not yet on a node), then
        leave the cluster."""
        if cancel:
            self._cancel.set()
        self._closing.set()
        self._thread.join()
        for actor in self._room:
            self.ray.kill(actor)
        self._session.close()

    def __enter__(self):
        return self

    def __exit__(self, kind, *exc):
        self.close(cancel=kind is not None)

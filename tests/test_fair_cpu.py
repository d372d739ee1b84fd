"""Grades that do not depend on what else runs on the machine: a task's own CPU time decides,
the wall clock only stops a task that sleeps, a task starved by other work is run again, and
every chapter's reference and stubs get exactly full marks and zero on a loaded machine."""

import os
import subprocess
import sys
import time

import pytest

from autograder import engine, sandbox
from autograder.sandbox import WorkerPool

from conftest import SAMPLE_ROOTS, needs_bubblewrap
from test_robustness import gelu_body


class busy_machine:
    """`count` busy processes outside the grader, each ending by itself after `seconds`."""

    def __init__(self, count, seconds=900):
        self.count, self.seconds = count, seconds

    def __enter__(self):
        spin = f"import time\nend = time.monotonic() + {self.seconds}\nwhile time.monotonic() < end: pass\n"
        # each in a session of its own: with autogroup scheduling, one session's processes share one CPU share
        self.procs = [subprocess.Popen([sys.executable, "-c", spin], start_new_session=True) for _ in range(self.count)]
        time.sleep(0.5)
        return self

    def __exit__(self, *exc):
        for proc in self.procs:
            proc.kill()
        for proc in self.procs:
            proc.wait()


def _notebook_task(source, cpu, cell_cpu=None):
    """A one-cell notebook task, the smallest task a worker runs."""
    cell_cpu = cell_cpu or cpu
    return {"kind": "notebook", "files": {}, "cells": [[0, source]], "variables": [], "timeout": cpu,
            "cell_timeout": cell_cpu, "cell_wall": sandbox.wall_cap(cell_cpu)}


@pytest.fixture(scope="module")
def one_worker():
    workers = WorkerPool(size=1)
    yield workers
    workers.close()


@needs_bubblewrap
def test_the_cpu_limit_decides_and_says_what_the_task_used(submission, grade):
    folder = submission(edits=gelu_body("    while True:\n        pass\n"))
    started = time.monotonic()
    report = grade(folder, timeout=1)
    item = report.item("gelu")
    assert item.status == "timeout"
    assert "CPU-time limit" in item.feedback_en and "CPU 时间用完" in item.feedback_zh
    assert "1.0 s of CPU time" in item.feedback_en or "1.1 s of CPU time" in item.feedback_en, item.feedback_en
    assert time.monotonic() - started < 30
    assert report.item("layer_norm").status == "passed"  # costs only itself


@needs_bubblewrap
def test_a_sleeping_task_is_stopped_by_the_wall_clock_and_told_so(submission, grade, monkeypatch):
    monkeypatch.setattr(sandbox, "WALL_EXTRA", 2.0)  # the cap is generous by default; keep the test short
    folder = submission(edits=gelu_body("    import time\n    time.sleep(1000)\n"))
    item = grade(folder, timeout=1).item("gelu")
    assert item.status == "timeout"
    assert "wall-clock cap" in item.feedback_en and "墙钟上限" in item.feedback_zh
    assert "sleeping or blocked" in item.feedback_en


@needs_bubblewrap
def test_a_starved_task_is_told_apart_from_a_sleeping_one(one_worker, monkeypatch):
    """Both reach the wall clock with CPU time to spare; only the starved one waited for a CPU."""
    work = "import time\nwhile time.process_time() < 1.0:\n    pass\n"  # 1 s of CPU: 1 s alone, far more when starved
    status, _, _, usage = one_worker.run(_notebook_task(work, 20))  # the default wall cap: 80 s
    assert status == "ok" and usage["cpu"] >= 1.0, usage
    monkeypatch.setattr(sandbox, "WALL_FACTOR", 0.0)  # from here on, a wall cap of 1.5 s
    monkeypatch.setattr(sandbox, "WALL_EXTRA", 1.5)
    status, _, _, usage = one_worker.run(_notebook_task("import time\ntime.sleep(30)\n", 20))
    assert (status, usage["limit"]) == ("timeout", "wall") and usage["waited"] < 0.5, usage
    with busy_machine(6 * (os.cpu_count() or 1)):
        status, _, _, usage = one_worker.run(_notebook_task(work, 20))
    assert status == "starved", usage
    assert usage["waited"] >= sandbox.STARVED_SHARE * usage["wall"] > usage["cpu"]


@needs_bubblewrap
def test_a_starved_task_is_run_again_and_the_report_says_so(submission, pool):
    """The grader runs a starved task again (engine.STARVED_RERUNS times at most) instead of failing it."""

    class FirstRunStarved:
        """The real pool, except that the gelu task's first run comes back starved."""

        def __init__(self, real):
            self.real, self.starved = real, set()
            self.size, self.devices, self.isolation, self.limits = real.size, real.devices, real.isolation, real.limits

        def run(self, task):
            if task.get("exercise") == "gelu" and task["key"] not in self.starved:
                self.starved.add(task["key"])
                return "starved", b"", "", {"cpu": 0.2, "wall": 50.0, "waited": 49.0, "limit": "wall"}
            return self.real.run(task)

    folder = submission()
    report = engine.grade(folder, "ch05_block", pool=FirstRunStarved(pool))
    assert report.score == report.max_score
    assert any(p.startswith("gelu was run again: it waited 49.0 s for a CPU") for p in report.problems), report.problems

    class AlwaysStarved(FirstRunStarved):
        def run(self, task):
            if task.get("exercise") == "gelu":
                return "starved", b"", "", {"cpu": 0.2, "wall": 50.0, "waited": 49.0, "limit": "wall"}
            return self.real.run(task)

    report = engine.grade(folder, "ch05_block", pool=AlwaysStarved(pool))
    item = report.item("gelu")
    assert item.status == "error" and "too busy" in item.feedback_en and "not your code's fault" in item.feedback_en
    assert sum("gelu was run again" in p for p in report.problems) == engine.STARVED_RERUNS
    assert report.item("layer_norm").status == "passed"


@needs_bubblewrap
def test_every_chapter_grades_exactly_on_a_loaded_machine():
    """4x the core count of busy processes outside the grader: every chapter's reference gets full
    marks and its stubs zero, as on an idle machine, since the limits are on the task's CPU time."""
    pool = WorkerPool()
    try:
        pool.wait_ready()
        with busy_machine(4 * (os.cpu_count() or 1)):
            for assignment_id, folder in SAMPLE_ROOTS.items():
                reference, stubs = engine.grade_many([folder / "reference", folder / "stubs"], assignment_id,
                                                     pool=pool)
                assert reference.score == reference.max_score, (assignment_id, [
                    (i.id, i.status, i.feedback_en[:200]) for i in reference.items if i.status != "passed"])
                assert stubs.score == 0, (assignment_id, [i.id for i in stubs.items if i.score])
    finally:
        pool.close()


def test_cgroup_v2_groups_get_pids_memory_and_one_cpu(tmp_path, monkeypatch):
    """On a unified hierarchy one group per worker holds all three limits, and the parent delegates
    the controllers it lacks (checked on a stand-in tree: this project's machines run cgroup v1)."""
    (tmp_path / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    (tmp_path / "cgroup.subtree_control").write_text("memory\n")
    monkeypatch.setattr(sandbox, "CGROUP_ROOT", tmp_path)
    assert sandbox.cgroup_version() == 2
    groups = sandbox.ControlGroups("hero-1-test")
    group = tmp_path / "hero-1-test"
    assert groups.paths == [group]
    assert (group / "pids.max").read_text() == str(sandbox.PIDS_MAX)
    assert (group / "memory.max").read_text() == str(sandbox.MEMORY_MAX)
    assert (group / "cpu.max").read_text() == f"{sandbox.CPU_PERIOD} {sandbox.CPU_PERIOD}"
    assert (tmp_path / "cgroup.subtree_control").read_text() == "+pids +cpu"


def test_cgroup_v1_groups_get_one_cpu(tmp_path, monkeypatch):
    for controller, _ in sandbox.V1_SETTINGS:
        (tmp_path / controller).mkdir()
    monkeypatch.setattr(sandbox, "CGROUP_ROOT", tmp_path)
    assert sandbox.cgroup_version() == 1
    sandbox.ControlGroups("hero-1-test")
    assert (tmp_path / "cpu" / "hero-1-test" / "cpu.cfs_quota_us").read_text() == str(sandbox.CPU_PERIOD)
    assert (tmp_path / "pids" / "hero-1-test" / "pids.max").read_text() == str(sandbox.PIDS_MAX)
    (tmp_path / "cpu").rename(tmp_path / "gone")
    assert sandbox.cgroup_version() is None

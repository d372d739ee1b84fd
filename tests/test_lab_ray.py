"""The labs' grids on Ray (hero_transformer/labs/grid.py, hero_transformer/cluster.py).

Every test that needs a Ray starts it itself, on this machine, and stops it, pass or fail: the
embedded Ray of `hero lab run`, or a two-node cluster (`ray start --head` and a second node joined
to it, one CPU each) in a temporary folder of its own.
"""

import dataclasses
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest

from hero_transformer import cluster, labs
from hero_transformer.labs import runner

import importlib.util

# not imported here: the embedded Ray must be the first import of ray in a process (cluster.py)
if importlib.util.find_spec("ray") is None:
    pytest.skip("the labs schedule on Ray: pip install ray (make test installs it)", allow_module_level=True)

BIN = Path(sys.executable).parent
RUN_TIMEOUT = 900  # seconds for a whole tiny grid through the CLI, on a loaded machine


@pytest.fixture
def two_node_cluster():
    """HOST:PORT of a Ray head and a second node joined to it, one CPU each, token-authenticated
    (hero_transformer/cluster.py's local_cluster), and the environment that joins it; both nodes
    stopped and their folder removed after the test."""
    with cluster.local_cluster(nodes=2, cpus_per_node=1) as (address, env):
        yield address, env


def hero_lab(args, labs_dir, env=None):
    env = {**(env or os.environ), "HERO_LABS_DIR": str(labs_dir), "HERO_LAB_CORPUS": "fixture"}
    done = subprocess.run([str(BIN / "hero"), "lab", "run", *args], env=env, capture_output=True, text=True,
                          timeout=RUN_TIMEOUT)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return done


def grid_of(labs_dir):
    """{lab/run: stored result} and {lab: claims} of every tiny grid under labs_dir."""
    runs, claims = {}, {}
    for name in labs.all_labs():
        folder = Path(labs_dir) / name / "tiny"
        for path in sorted((folder / "runs").glob("*.json")):
            stored = json.loads(path.read_text(encoding="utf-8"))
            figures = {key: value for key, value in stored["result"].items() if key != "seconds"}  # a run's own timing
            runs[f"{name}/{path.stem}"] = (stored["params"], stored["setting"], figures, stored["threads"])
        claims[name] = json.loads((folder / "results.json").read_text(encoding="utf-8"))["claims"]
    return runs, claims


def test_every_tiny_grid_on_a_two_node_cluster_equals_the_embedded_run(two_node_cluster, tmp_path):
    address, env = two_node_cluster
    on_cluster = hero_lab(["--all", "--tiny", "--address", address], tmp_path / "cluster", env)
    assert f"on the Ray cluster at {address}" in on_cluster.stdout
    embedded = hero_lab(["--all", "--tiny"], tmp_path / "embedded")
    assert "on an embedded Ray" in embedded.stdout
    cluster_runs, cluster_claims = grid_of(tmp_path / "cluster")
    embedded_runs, embedded_claims = grid_of(tmp_path / "embedded")
    expected = sum(len(runner.seeded_runs(lab.settings["tiny"], lab.runs)) for lab in labs.all_labs().values())
    assert len(cluster_runs) == expected
    assert cluster_runs == embedded_runs  # every figure of every run, to the last bit
    assert cluster_claims == embedded_claims


def test_the_embedded_ray_listens_on_the_loopback_address_only(tmp_path):
    script = ("from hero_transformer import cluster\nimport json, psutil\n"
              "with cluster.session(num_cpus=1) as ray:\n"
              "    found = set()\n"
              "    for c in psutil.net_connections(kind='inet'):\n"
              "        if c.status == psutil.CONN_LISTEN and c.pid is not None:\n"
              "            found.add(c.laddr.ip)\n"
              "    print(json.dumps(sorted(found)))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    listening = json.loads(done.stdout.strip().splitlines()[-1])
    assert listening and all(ip in ("127.0.0.1", "::ffff:127.0.0.1") for ip in listening), listening


def workers_running(name="ray::_remote_run"):
    """This test's own Ray workers: descendants of this process (its embedded raylet's children),
    never those of another Ray on the machine (a grid someone else is running)."""
    found = []
    for process in psutil.Process().children(recursive=True):
        try:
            if (process.cmdline() or [""])[0].startswith(name):
                found.append(process)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            pass
    return found


def test_a_killed_worker_loses_only_its_run_and_a_rerun_finishes_the_grid(tmp_path, monkeypatch):
    monkeypatch.setenv("HERO_LAB_CORPUS", "fixture")
    lab = labs.get("residual_ablation")
    # long enough to be caught running; one seed keeps the grid at 4 runs
    slow = {**lab.settings["tiny"], "steps": 600, "eval_every": 600, "seeds": [0]}
    lab = dataclasses.replace(lab, settings={**lab.settings, "tiny": slow})
    out = tmp_path / "grid"
    outcome = {}

    def first_pass():
        try:
            runner.run_lab(lab, "tiny", out=out, progress=False, log=lambda line: None, scheduler="ray")
        except RuntimeError as exc:
            outcome["error"] = str(exc)

    driver = threading.Thread(target=first_pass)
    driver.start()
    killed = None
    deadline = time.monotonic() + 600
    while killed is None and driver.is_alive() and time.monotonic() < deadline:
        running = workers_running()
        if running and list((out / "runs").glob("*.json")):  # mid-grid: a run saved, another running
            killed = running[0]
            killed.kill()
        time.sleep(0.05)
    driver.join(timeout=600)
    assert killed is not None, "no worker was caught mid-grid"
    assert "1 of 4 runs were lost" in outcome.get("error", ""), outcome
    saved = {path.stem: path.stat().st_mtime_ns for path in (out / "runs").glob("*.json")}
    assert 1 <= len(saved) == 3 and not (out / "results.json").exists()

    lines = []
    report = runner.run_lab(lab, "tiny", out=out, progress=False, log=lines.append, scheduler="ray", table=False)
    assert "3 already done" in lines[0]
    assert {path.stem: path.stat().st_mtime_ns for path in (out / "runs").glob("*.json") if path.stem in saved} == saved
    assert set(report.results["runs"]) == {run.key for run, _ in runner.seeded_runs(slow, lab.runs)}
    assert len(report.claims) == len(lab.claims)

"""The labs' grids on Ray (hero_transformer/labs/grid.py, hero_transformer/cluster.py).

Every test that needs a Ray starts it itself, on this machine, and stops it, pass or fail: the
embedded Ray of `hero lab run`, or a two-node cluster (cluster.local_cluster: a head and a second
node, one CPU each) in a temporary folder of its own, started once for this file, on a machine
made busy for the length of its start (the modules that import `two_node_cluster` start theirs
on the machine as it is).
"""

import contextlib
import dataclasses
import json
import os
import secrets
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


# set, with a value of the test's own, in the environment of every process of a Ray a test
# starts (Ray's processes inherit it), so that the test can find all of them and only them
RAY_PROCESSES = "HERO_TEST_RAY_PROCESSES"
BUSY_LOOPS_PER_CPU = 6  # a start under load 12 on 2 CPUs once failed (issue 38)


@contextlib.contextmanager
def busy_machine():
    """Every CPU of the machine kept busy, several times over, by busy-loop processes, stopped
    at the end of the block."""
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
             for _ in range(BUSY_LOOPS_PER_CPU * os.cpu_count())]
    try:
        yield
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()


@contextlib.contextmanager
def two_nodes(busy):
    """HOST:PORT of a Ray head and a second node joined to it, one CPU each, token-authenticated
    (hero_transformer/cluster.py's local_cluster), and the environment that joins it, whose
    RAY_PROCESSES names the cluster's processes; started while the machine is busy if asked (the
    start must tolerate it), stopped and its folder removed at the end of the block."""
    with contextlib.ExitStack() as stack:
        with pytest.MonkeyPatch.context() as patch, (busy_machine() if busy else contextlib.nullcontext()):
            patch.setenv(RAY_PROCESSES, secrets.token_hex(8))
            address, env = stack.enter_context(cluster.local_cluster(nodes=2, cpus_per_node=1))
        yield address, env


@pytest.fixture(scope="module")
def two_node_cluster():
    """two_nodes for the modules that grade on Ray (tests/test_class_autograde.py...), once per module."""
    with two_nodes(busy=False) as joined:
        yield joined


@pytest.fixture(scope="module")
def two_node_cluster_started_busy():
    """two_nodes started on a busy machine, once for this module: the loopback test and the grids
    join it, so that the busy start costs one start."""
    with two_nodes(busy=True) as joined:
        yield joined


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


# The tests that join the module's two-node cluster come last: it stays up until the module ends.

# A driver that joins (or embeds) a Ray, runs a task on every node so that workers exist, and
# lists the listening sockets of every process whose environment holds its RAY_PROCESSES value:
# the Ray's own processes (GCS, raylets, agents, autoscaler monitor, workers) and the driver
LISTENING = """
import json, os, sys, psutil
from hero_transformer import cluster

mine = os.environ["HERO_TEST_RAY_PROCESSES"]
with cluster.session(address=sys.argv[1] if len(sys.argv) > 1 else None) as ray:
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    where = ray.remote(num_cpus=0)(lambda: os.getpid())
    workers = ray.get([where.options(scheduling_strategy=NodeAffinitySchedulingStrategy(node["NodeID"], soft=False))
                       .remote() for node in ray.nodes() if node["Alive"]])
    ray_processes = set()
    for process in psutil.process_iter():
        try:
            if process.environ().get("HERO_TEST_RAY_PROCESSES") == mine:
                ray_processes |= {process, *process.children(recursive=True)}  # the agents' environment
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):  # reads empty: they retitle
            pass
    found = []
    for process in ray_processes:
        try:
            kind = ("driver" if process.pid == os.getpid() else "worker" if process.pid in workers
                    else process.name())
            found += [[kind, c.laddr.ip, c.laddr.port] for c in process.net_connections(kind="inet")
                      if c.status == psutil.CONN_LISTEN]
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            pass
    print(json.dumps({"workers": len(workers), "listening": found}))
"""
LOOPBACK = {"127.0.0.1", "::1", "::ffff:127.0.0.1"}


@pytest.mark.parametrize("kind", ["embedded", "two-node cluster"])
def test_every_ray_the_project_starts_listens_on_the_loopback_address_only(kind, request):
    """Each kind of Ray the project starts (cluster.py: the embedded Ray of `hero lab run`, and
    local_cluster's nodes with a driver joined through --address): every listening socket of
    every one of its processes is on the loopback address."""
    if kind == "embedded":
        args, env, nodes = [], {**os.environ, RAY_PROCESSES: secrets.token_hex(8)}, 1
    else:
        address, env = request.getfixturevalue("two_node_cluster_started_busy")
        args, nodes = [address], 2
    done = subprocess.run([sys.executable, "-c", LISTENING, *args], env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    listeners = {listener for listener, _, _ in seen["listening"]}
    assert seen["workers"] == nodes and {"driver", "worker", "gcs_server", "raylet", "ray::RuntimeEnvAgent"} <= \
        listeners, seen
    beyond = [socket for socket in seen["listening"] if socket[1] not in LOOPBACK]
    assert not beyond, f"listening beyond the loopback address: {beyond}"


# A start that fails every time, as on a machine too busy for Ray's start-up waits (here cut to
# nothing), then what is left of the processes whose environment holds its RAY_PROCESSES value
FAILING_START = """
import os, sys, psutil
from hero_transformer import cluster

try:
    with (cluster.local_cluster(nodes=2) if sys.argv[1] == "two-node cluster" else cluster.session()):
        print("started")
except cluster.RayUnavailable as exc:
    print(exc)
mine = os.environ["HERO_TEST_RAY_PROCESSES"]
left = []
for process in psutil.process_iter():
    try:
        if process.pid != os.getpid() and process.environ().get("HERO_TEST_RAY_PROCESSES") == mine:
            left += [process.name()] + [child.name() for child in process.children(recursive=True)]
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        pass
print("left:", sorted(left))
"""


@pytest.mark.parametrize("kind", ["embedded", "two-node cluster"])
def test_a_ray_that_cannot_start_is_tried_again_then_says_why_and_leaves_nothing_running(kind):
    env = {**os.environ, "RAY_gcs_server_port_wait_time_s": "0", RAY_PROCESSES: secrets.token_hex(8)}
    done = subprocess.run([sys.executable, "-c", FAILING_START, kind], env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    said, left = done.stdout.strip().splitlines()[-2:]
    assert "starting it once more" in done.stderr, done.stderr[-3000:]
    assert f"did not start, {cluster.START_ATTEMPTS} times" in said and "gcs_server_port" in said, said  # what failed, and why
    assert "Retry when the machine is less busy" in said and "RAY_agent_register_timeout_ms" in said, said
    assert left == "left: []"


def test_every_tiny_grid_on_a_two_node_cluster_equals_the_embedded_run(two_node_cluster_started_busy, tmp_path):
    address, env = two_node_cluster_started_busy
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


def test_a_node_slow_to_register_is_waited_for_beyond_rays_fixed_30_seconds(monkeypatch):
    """Ray polls services.get_node for a new node and gives up after a fixed 30 s; every start of
    the project's goes through the patient get_node, which keeps asking (CI at load 14 saw two
    starts in a row time out there)."""
    ray = cluster._import_ray(loopback=True)
    from ray._private import services

    assert services.get_node.hero_patient
    answers = iter([RuntimeError("not yet")] * 3 + [{"NodeID": "n"}])

    def slow(gcs_address, node_id):
        answer = next(answers)
        if isinstance(answer, Exception):
            raise answer
        return answer

    monkeypatch.setattr(services, "get_node", slow)
    cluster._wait_longer_for_nodes(ray)
    assert services.get_node("127.0.0.1:1", "n") == {"NodeID": "n"}
    monkeypatch.setattr(cluster, "NODE_REGISTER_WAIT_S", 0)
    monkeypatch.setattr(services, "get_node", lambda *_: (_ for _ in ()).throw(RuntimeError("never")))
    cluster._wait_longer_for_nodes(ray)
    with pytest.raises(RuntimeError, match="never"):
        services.get_node("127.0.0.1:1", "n")

"""The one way the project starts or joins Ray (docs/labs.md, "Ray").

`session()` gives a Ray for the length of a `with` block:

- embedded (the default): a Ray started for this process alone, on the loopback address, with no
  dashboard, no usage report, a token of this process's own and its own temporary folder, stopped
  and removed at the end of the block;
- `address="HOST:PORT"`: an existing cluster (`ray start --head` and its nodes), joined and left
  as it was; an address on 127.0.0.1 is joined in Ray's single-machine mode, on the loopback
  address (in cluster mode Ray would look for it on the machine's network address).

A block inside another block uses the Ray already there, so a test can share one embedded Ray
between many grids.  `local_cluster()` starts a cluster of several nodes on this machine, for the
tests and benchmarks that join one.

Every Ray this module starts (embedded or local_cluster) listens on the loopback address only:
Ray binds each of its servers (GCS, raylet and object manager, workers, agents, the autoscaler's
metrics) to 127.0.0.1 exactly when the node's address is 127.0.0.1, and keeps that address only in
its single-machine mode (`ray start` and `ray.init` replace a loopback address with the machine's
own in cluster mode).  Each start gets patient start-up timeouts and one retry, so that a loaded
machine delays it rather than fails it.
"""

import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

# Read by Ray when it is imported: no usage report (the machine may have no network), and
# tokens for every connection (Ray's default since 2.5x, stated so that a cluster started
# without it is refused rather than trusted)
_ALWAYS = {"RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "token"}
# Ray treats a node whose address is loopback as a single-machine Ray and then binds every one
# of its servers to 127.0.0.1; it reads this once, at import (ray._private.ray_constants)
_LOOPBACK = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
# Ray's start-up waits, read from the environment by every Ray process (RAY_<config name>).
# Their defaults (30 s for a raylet's agents and for the GCS port, 60 s for a worker to register)
# ran out on a 2-core machine at load 12; these only lengthen a wait, never a healthy start
_PATIENT = {"RAY_agent_register_timeout_ms": "300000", "RAY_gcs_server_port_wait_time_s": "300",
            "RAY_worker_register_timeout_seconds": "300"}
# set in the environment of the Ray processes a start creates, so that a failed start can find
# and stop every one of them, with their descendants (Ray's processes retitle themselves, and an
# embedded Ray's are its driver's children only until that driver dies)
_MARKER = "HERO_RAY_START"
_PROCESS_TOKEN = secrets.token_hex(32)
START_ATTEMPTS = 3
CLUSTER_START_TIMEOUT = 900  # seconds for local_cluster's whole start, every attempt, on a loaded machine
# each local_cluster node's object store (Ray's one-machine cluster would give 150 MiB): room for a
# class's submissions in flight; shared memory is taken as it is used, and Ray spills beyond it
OBJECT_STORE_BYTES = 2 * 1024**3


class RayUnavailable(RuntimeError):
    pass


def _import_ray(loopback):
    """The `ray` module, in single-machine mode where loopback is true: what an embedded Ray, a node
    of local_cluster and a process joining a cluster on 127.0.0.1 need (in cluster mode Ray would
    bind to every interface, and a process joining 127.0.0.1 would look for it on the machine's
    network address)."""
    wanted = {**_ALWAYS, **_PATIENT, **(_LOOPBACK if loopback else {})}
    if "ray" in sys.modules:
        from ray._private import ray_constants

        if loopback and ray_constants.ENABLE_RAY_CLUSTER:
            raise RayUnavailable("Ray was imported in this process in its cluster mode before a Ray on the loopback "
                                 "address was asked for; start or join it from a fresh process")
    for name, value in wanted.items():
        os.environ.setdefault(name, value)
    import ray

    _wait_longer_for_nodes(ray)
    return ray


NODE_REGISTER_WAIT_S = 300  # Ray's own is a fixed 30 s (ray/_private/node.py), not read from any setting


def _wait_longer_for_nodes(ray):
    """A node Ray starts waits 30 s for its raylet to register with the GCS and then fails. A live
    raylet can take longer on a loaded machine (before registering it waits for each of its agents
    to report a port), so Ray's poll of services.get_node is replaced by one that keeps asking for
    up to NODE_REGISTER_WAIT_S while the node's raylet is alive, and gives up as soon as it is gone
    (a raylet that aborted will never register)."""
    from ray._private import services

    if getattr(services.get_node, "hero_patient", False):
        return
    get_node = services.get_node

    def patient_get_node(gcs_address, node_id):
        deadline = time.monotonic() + NODE_REGISTER_WAIT_S
        while True:
            try:
                return get_node(gcs_address, node_id)
            except RuntimeError:
                if time.monotonic() > deadline or not _raylet_alive(node_id):
                    raise
                time.sleep(0.5)

    patient_get_node.hero_patient = True
    services.get_node = patient_get_node


def _raylet_alive(node_id):
    """Whether a raylet of this node runs among this process's descendants (Ray starts it there)."""
    import psutil

    for process in psutil.Process().children(recursive=True):
        try:
            if process.status() != psutil.STATUS_ZOMBIE and f"--node_id={node_id}" in process.cmdline():
                return True
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            pass
    return False


FIXED_WAIT = "in no setting"  # said of a wait that only a less busy machine can outlast


def _raylet_failure(folder):
    """Why a raylet under `folder` (a start's Ray temporary folder) aborted, from its log: what Ray
    checked and found false (a raylet logs it on a line of its own before it aborts), or ""."""
    import re

    for log in sorted(Path(folder).glob("**/logs/raylet*.out")):
        for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
            found = re.search(r"Check failed: \S+ (.+)", line)
            if found:
                why = found.group(1).strip()
                if "Timed out waiting for file" in why:
                    why += (f" (the raylet waits a fixed time, about 15 s in Ray 2.60 and {FIXED_WAIT}, for each of "
                            "its agent processes to report its port; these had not started by then)")
                return f"its raylet aborted: {why}"
    return ""


def _not_started(what, attempts, why):
    load = os.getloadavg()[0]
    tries = f"{attempts} attempt" + ("s" if attempts != 1 else "")
    advice = "Retry when the machine is less busy"
    if FIXED_WAIT not in str(why):
        advice += f", or lengthen Ray's start-up waits in the environment ({', '.join(_PATIENT)})"
    return RayUnavailable(f"{what} did not start after {tries} (load average {load:.1f} on {os.cpu_count()} "
                          f"CPUs): {why}. {advice}")


def _retrying(what, why):
    print(f"hero: {what} did not start ({why}); starting it once more", file=sys.stderr, flush=True)


def _stop_marked(marker):
    """Kill every process (but this one) whose environment carries this start's marker, and their
    descendants: Ray's agents retitle themselves over their environment, which then reads empty."""
    import psutil

    marked = set()
    for process in psutil.process_iter():
        try:
            if process.pid != os.getpid() and process.environ().get(_MARKER) == marker:
                marked |= {process, *process.children(recursive=True)}
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            pass
    for process in marked:
        try:
            process.kill()
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(marked, timeout=30)


def _start_embedded(ray, folder, options):
    """ray.init for the embedded Ray, retried after a failed start (START_ATTEMPTS in all): a loaded
    machine can still outlast the lengthened waits."""
    marker = folder.name
    os.environ[_MARKER] = marker  # inherited by the Ray processes started now, and only by them
    try:
        for attempt in range(1, START_ATTEMPTS + 1):
            try:
                ray.init(address="local", _temp_dir=str(folder / str(attempt)), **options)
                return
            except Exception as exc:  # noqa: BLE001 (any failure of a start: stop what it left, then retry or say so)
                ray.shutdown()
                _stop_marked(marker)
                why = "; ".join(filter(None, [str(exc), _raylet_failure(folder / str(attempt))]))
                if attempt == START_ATTEMPTS:
                    raise _not_started("the embedded Ray", attempt, why) from None
                _retrying("the embedded Ray", why)
    finally:
        os.environ.pop(_MARKER, None)


@contextmanager
def session(address=None, num_cpus=None, num_gpus=None):
    """Yield the `ray` module, connected.  address: None for the embedded Ray, else a running
    cluster's HOST:PORT.  num_cpus / num_gpus: what the embedded Ray offers (default: what the
    machine has)."""
    if "ray" in sys.modules and sys.modules["ray"].is_initialized():
        yield sys.modules["ray"]
        return
    embedded = address is None
    try:
        ray = _import_ray(embedded or _on_loopback(address))
    except ImportError:
        raise RayUnavailable("the labs schedule their runs on Ray: pip install 'ray>=2.50' (make test installs it)") \
            from None
    options = {"include_dashboard": False, "log_to_driver": False, "configure_logging": True,
               "logging_level": "ERROR"}
    folder = None
    if embedded:
        folder = Path(tempfile.mkdtemp(prefix="hero-ray-"))
        # one token for the process's lifetime: Ray reads it once, so a second embedded Ray in the
        # same process must be started with the same one
        os.environ.setdefault("RAY_AUTH_TOKEN", _PROCESS_TOKEN)
        try:
            _start_embedded(ray, folder, {"num_cpus": num_cpus, "num_gpus": num_gpus, **options})
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        nodes = {node["NodeManagerAddress"] for node in ray.nodes()}
        if nodes != {"127.0.0.1"}:
            ray.shutdown()
            shutil.rmtree(folder, ignore_errors=True)
            raise RayUnavailable(f"the embedded Ray came up on {sorted(nodes)}, not on the loopback address")
    else:
        try:
            ray.init(address=address, **options)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise RayUnavailable(f"cannot join the Ray cluster at {address}: {exc} (the cluster's token must be in "
                                 "~/.ray/auth_token or $RAY_AUTH_TOKEN_PATH)") from None
    try:
        yield ray
    finally:
        ray.shutdown()
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)


def _on_loopback(address):
    host = address.rsplit(":", 1)[0].strip("[]")
    return host == "localhost" or host.startswith("127.") or host == "::1"


@contextmanager
def local_cluster(nodes=2, cpus_per_node=1):
    """A Ray cluster of `nodes` nodes on this machine, every server on 127.0.0.1, token-authenticated,
    in a temporary folder of its own: what a test or a benchmark joins with `session(address)`.
    Yields (HOST:PORT, the environment a process needs to join it); stops every process of the
    cluster and removes the folder at the end, however the block ends.

    The nodes are Ray's own one-machine cluster (`ray.cluster_utils.Cluster`, which Ray's tests use)
    in a keeper process of their own, started in Ray's single-machine mode: `ray start` would put
    them on the machine's network address, listening on every interface."""
    folder = Path(tempfile.mkdtemp(prefix="hr-", dir="/tmp"))  # short: Ray's socket paths must fit
    token = folder / "token"
    token.write_text(secrets.token_hex(32), encoding="utf-8")
    env = {**os.environ, **_ALWAYS, "RAY_AUTH_TOKEN_PATH": str(token)}
    env.pop("RAY_AUTH_TOKEN", None)  # the cluster's token is the file's
    keeper = None
    try:
        deadline = time.monotonic() + CLUSTER_START_TIMEOUT
        for attempt in range(1, START_ATTEMPTS + 1):
            keeper, address = _start_keeper(folder / str(attempt), env, nodes, cpus_per_node, deadline)
            if keeper is not None:
                break
            if attempt == START_ATTEMPTS or time.monotonic() > deadline:
                raise _not_started("the local Ray cluster", attempt, address)
            _retrying("the local Ray cluster", address)
        yield address, env
    finally:
        if keeper is not None:
            _stop_keeper(keeper, folder / str(attempt))
        shutil.rmtree(folder, ignore_errors=True)


def _start_keeper(folder, env, nodes, cpus_per_node, deadline):
    """(the keeper process, HOST:PORT) of a started cluster, or (None, why it did not start) with
    everything it started stopped."""
    folder.mkdir()
    keeper_env = {**_PATIENT, **env, **_LOOPBACK, "RAY_TMPDIR": str(folder), _MARKER: str(folder)}
    log = open(folder / "keeper.log", "w+", encoding="utf-8")
    with log:
        keeper = subprocess.Popen([sys.executable, "-P", __file__, str(nodes), str(cpus_per_node)], env=keeper_env,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True,
                                  start_new_session=True)
        line = _read_line(keeper.stdout, deadline)
        if line.startswith("started "):
            return keeper, line.split(None, 1)[1].strip()
        _stop_keeper(keeper, folder)
        log.seek(0)
        why = line.strip() or (log.read()[-2000:].strip() or "no answer from its keeper process")
    return None, "; ".join(filter(None, [why, _raylet_failure(folder)]))


def _read_line(stream, deadline):
    import selectors

    with selectors.DefaultSelector() as selector:
        selector.register(stream, selectors.EVENT_READ)
        if selector.select(timeout=max(1.0, deadline - time.monotonic())):
            return stream.readline()
    return "no node came up before the start's deadline"


def _stop_keeper(keeper, folder):
    """Ask the keeper to stop its cluster (closing its input), then kill whatever of it is left."""
    try:
        keeper.stdin.close()
        keeper.wait(timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        pass
    try:
        os.killpg(keeper.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    keeper.wait()
    _stop_marked(str(folder))


def _keep(nodes, cpus_per_node):
    """The keeper process of local_cluster: starts the nodes, answers 'started HOST:PORT' (or why
    not) on its standard output and keeps the nodes until its standard input closes."""
    answer = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # whatever Ray prints goes to the log, never into the answer
    ray = _import_ray(loopback=True)
    from ray.cluster_utils import Cluster

    cluster = Cluster(shutdown_at_exit=True)
    try:
        for _ in range(nodes):
            cluster.add_node(node_ip_address="127.0.0.1", num_cpus=cpus_per_node, num_gpus=0,
                             include_dashboard=False, object_store_memory=OBJECT_STORE_BYTES)
    except Exception as exc:  # noqa: BLE001 (reported to local_cluster, which stops what was started)
        print(f"failed: {type(exc).__name__}: {exc}".replace("\n", " "), file=answer, flush=True)
        return 1
    print("started", cluster.address, file=answer, flush=True)
    sys.stdin.read()
    cluster.shutdown()
    ray.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(_keep(int(sys.argv[1]), int(sys.argv[2])))

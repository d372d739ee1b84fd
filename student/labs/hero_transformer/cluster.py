"""The one way the project starts or joins Ray (docs/labs.md, "Ray").

`session()` gives a Ray for the length of a `with` block:

- embedded (the default): a Ray started for this process alone, on the loopback address, with no
  dashboard, no usage report, a token of this process's own and its own temporary folder, stopped
  and removed at the end of the block;
- `address="HOST:PORT"`: an existing cluster (`ray start --head` and its nodes), joined and left
  as it was.

A block inside another block uses the Ray already there, so a test can share one embedded Ray
between many grids.  `local_cluster()` starts a cluster of several nodes on this machine, for the
tests and benchmarks that join one.
"""

import os
import secrets
import shutil
import signal
import socket
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
_PROCESS_TOKEN = secrets.token_hex(32)


class RayUnavailable(RuntimeError):
    pass


def _import_ray(embedded):
    wanted = {**_ALWAYS, **(_LOOPBACK if embedded else {})}
    if "ray" in sys.modules:
        from ray._private import ray_constants

        if embedded and ray_constants.ENABLE_RAY_CLUSTER:
            raise RayUnavailable("Ray was imported in this process before the embedded Ray was asked for, so it "
                                 "would bind to every interface; start the embedded Ray in a fresh process")
    for name, value in wanted.items():
        os.environ.setdefault(name, value)
    import ray

    return ray


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
        ray = _import_ray(embedded)
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
        ray.init(address="local", num_cpus=num_cpus, num_gpus=num_gpus, _temp_dir=str(folder), **options)
        nodes = {node["NodeManagerAddress"] for node in ray.nodes()}
        if nodes != {"127.0.0.1"}:
            ray.shutdown()
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


@contextmanager
def local_cluster(nodes=2, cpus_per_node=1):
    """A Ray cluster of `nodes` nodes on this machine (`ray start --head` and nodes joined to it),
    on the loopback address, token-authenticated, in a temporary folder of its own: what a test or
    a benchmark joins with `session(address)`.  Yields (HOST:PORT, the environment a process needs
    to join it); stops every node and removes the folder at the end, however the block ends."""
    import psutil

    folder = Path(tempfile.mkdtemp(prefix="hr-", dir="/tmp"))  # short: Ray's socket paths must fit
    token = folder / "token"
    token.write_text(secrets.token_hex(32), encoding="utf-8")
    env = {**os.environ, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(token), "RAY_USAGE_STATS_ENABLED": "0"}
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    address = f"127.0.0.1:{port}"
    ray = str(Path(sys.executable).parent / "ray")
    common = ["--block", "--node-ip-address=127.0.0.1", f"--num-cpus={cpus_per_node}", "--num-gpus=0"]
    started = []
    try:
        for number in range(nodes):
            where = ([ "--head", f"--port={port}", "--include-dashboard=false", f"--temp-dir={folder / 'ray'}"]
                     if number == 0 else [f"--address={address}"])
            started.append(subprocess.Popen([ray, "start", *where, *common], env=env, stdout=subprocess.DEVNULL,
                                            stderr=subprocess.DEVNULL, start_new_session=True))
            _wait_for_nodes(ray, address, env, number + 1)
        yield address, env
    finally:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for node in started:
                try:
                    os.killpg(node.pid, sig)
                except ProcessLookupError:
                    pass
            time.sleep(1 if sig == signal.SIGTERM else 0)
        for node in started:
            node.wait(timeout=30)
        for process in psutil.process_iter(["cmdline"]):  # what the nodes started in sessions of their own
            try:
                if any(str(folder) in part for part in process.info["cmdline"] or ()):
                    process.kill()
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                pass
        shutil.rmtree(folder, ignore_errors=True)


def _wait_for_nodes(ray, address, env, count, timeout=120):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = subprocess.run([ray, "status", f"--address={address}"], env=env, capture_output=True, text=True,
                                timeout=60)
        active = status.stdout.split("Active:", 1)[-1].split("Pending:", 1)[0]
        if status.returncode == 0 and active.count("node_") >= count:
            return
        time.sleep(2)
    raise RayUnavailable(f"the Ray cluster at {address} did not reach {count} nodes in {timeout} s")

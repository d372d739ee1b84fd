"""The one way the project starts or joins Ray (docs/labs.md, "Ray").

`session()` gives a Ray for the length of a `with` block:

- embedded (the default): a Ray started for this process alone, on the loopback address, with no
  dashboard, no usage report, a token of this process's own and its own temporary folder, stopped
  and removed at the end of the block;
- `address="HOST:PORT"`: an existing cluster (`ray start --head` and its nodes), joined and left
  as it was.

A block inside another block uses the Ray already there, so a test can share one embedded Ray
between many grids.
"""

import os
import secrets
import shutil
import sys
import tempfile
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

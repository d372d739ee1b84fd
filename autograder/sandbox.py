"""Worker processes that run student code, and the sandbox around them.

Isolation modes (HERO_SANDBOX selects one; the default is `auto`):
- `bubblewrap`: the worker runs under bwrap with no network, its own PID/IPC
  namespaces, a read-only view of the system, an empty /tmp, and the course
  tree (reference, solutions, hidden tests, gradebook) and home directory
  hidden behind empty tmpfs mounts.
- `process`: a plain child process with a cleared environment, `python -I`
  and an empty working directory.  Student code can still read files the
  grading user can read; use it only where bwrap is unavailable (the report
  says which mode graded it).
`auto` picks bubblewrap when `bwrap` runs here and falls back to `process`.
"""

import atexit
import json
import os
import queue
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from functools import lru_cache
from pathlib import Path

WORKER_FILES = ("worker.py", "probes.py")
SANDBOX_WORKER_DIR = "/tmp/hero-worker"  # inside the sandbox's own empty /tmp
START_TIMEOUT = 120.0  # importing torch on a cold, loaded machine
REPLY_MARGIN = 15.0  # the worker kills a task itself; this only catches a dead worker


class WorkerFailure(Exception):
    """The worker died or stopped answering; the current task is lost, not the run."""


class SandboxUnavailable(RuntimeError):
    """No worker could be started at all: the grader itself failed, not the submission."""


@lru_cache(maxsize=None)
def bubblewrap_works():
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return False
    probe = subprocess.run(
        [bwrap, "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent", "true"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    return probe.returncode == 0


def choose_isolation():
    wanted = os.environ.get("HERO_SANDBOX", "auto")
    if wanted not in ("auto", "bubblewrap", "process"):
        raise ValueError(f"HERO_SANDBOX must be auto, bubblewrap or process, not {wanted!r}")
    if wanted == "process":
        return "process"
    if bubblewrap_works():
        return "bubblewrap"
    if wanted == "bubblewrap":
        raise RuntimeError("HERO_SANDBOX=bubblewrap but bwrap is missing or fails here")
    return "process"


def _inside(path, folder):
    try:
        Path(path).resolve().relative_to(Path(folder).resolve())
        return True
    except ValueError:
        return False


def _bwrap_argv(worker_dir, hidden):
    python_roots = sorted({str(Path(sys.prefix).resolve()), str(Path(sys.base_prefix).resolve())})
    argv = [
        shutil.which("bwrap"), "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
        "--tmpfs", "/tmp", "--tmpfs", "/run", "--tmpfs", "/var",
    ]
    for path in hidden:
        argv += ["--tmpfs", str(path)]
    # the interpreter and its packages stay visible even when they live under a hidden folder
    for root in python_roots:
        if any(_inside(root, path) for path in hidden):
            argv += ["--ro-bind", root, root]
    argv += [
        "--ro-bind", str(worker_dir), SANDBOX_WORKER_DIR,
        # no --die-with-parent: it fires when the *thread* that started bwrap ends; a worker
        # instead exits when its stdin closes, which happens when the grader goes away
        "--unshare-all", "--new-session", "--chdir", "/tmp",
        "--clearenv", "--setenv", "PATH", "/usr/bin:/bin", "--setenv", "HOME", "/tmp",
        "--setenv", "LANG", "C.UTF-8", "--setenv", "OMP_NUM_THREADS", "1", "--setenv", "HERO_PID_NAMESPACE", "1",
    ]
    return argv + [sys.executable, "-I", "-B", f"{SANDBOX_WORKER_DIR}/worker.py"]


# Limits on what student code may use.  A memory bomb or a fork bomb must cost one
# exercise, never the machine.  cgroup v1 pids and memory controllers bound each worker
# (the student's children included) where the grading user may create groups; the
# worker also caps each task's address space (RLIMIT_AS), which works everywhere.
PIDS_MAX = 256
MEMORY_MAX = 6 * 1024**3  # per worker: torch's own footprint plus generous room
CGROUP_ROOT = Path("/sys/fs/cgroup")


class ControlGroups:
    """A pids and a memory cgroup (v1) for one worker, removed when it closes."""

    def __init__(self, name):
        self.paths = []
        for controller, settings in (("pids", {"pids.max": PIDS_MAX}),
                                     ("memory", {"memory.limit_in_bytes": MEMORY_MAX})):
            path = CGROUP_ROOT / controller / name
            path.mkdir()
            self.paths.append(path)
            for key, value in settings.items():
                (path / key).write_text(str(value))

    def add(self, pid):
        for path in self.paths:
            (path / "cgroup.procs").write_text(str(pid))

    def remove(self):
        for path in self.paths:
            try:
                path.rmdir()
            except OSError:
                pass


@lru_cache(maxsize=None)
def cgroups_work():
    try:
        probe = ControlGroups(f"hero-probe-{os.getpid()}")
    except OSError:
        return False
    probe.remove()
    # groups an earlier run could not remove yet (their processes were still dying): rmdir
    # succeeds only on empty groups, so live ones are left alone
    for stale in CGROUP_ROOT.glob("*/hero-*"):
        try:
            stale.rmdir()
        except OSError:
            pass
    return True


def describe_limits():
    per_task = "address space per task"
    if cgroups_work():
        return f"cgroup: {PIDS_MAX} processes and {MEMORY_MAX // 1024**3} GiB per worker; {per_task}"
    return f"{per_task} only (no writable cgroup here: process count unbounded)"


class Worker:
    def __init__(self, argv, env, cwd):
        self.log = tempfile.TemporaryFile()
        self.groups = ControlGroups(f"hero-{os.getpid()}-{id(self)}") if cgroups_work() else None
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, env=env, cwd=cwd,
        )
        if self.groups:
            # before any task arrives: every process the worker forks inherits the groups
            self.groups.add(self.proc.pid)
        self._buffer = b""
        hello = self._read_line(time.monotonic() + START_TIMEOUT)
        if not json.loads(hello).get("ready"):
            raise WorkerFailure("worker did not start")

    def _read_line(self, deadline):
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise WorkerFailure("worker stopped answering")
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    raise WorkerFailure("worker exited: " + self.stderr_tail())
                self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line

    def stderr_tail(self):
        self.log.seek(0)
        return self.log.read()[-2000:].decode("utf-8", "replace")

    def run(self, task):
        try:
            self.proc.stdin.write((json.dumps(task) + "\n").encode())
            self.proc.stdin.flush()
        except OSError as exc:
            raise WorkerFailure(f"worker exited: {exc}") from exc
        reply = json.loads(self._read_line(time.monotonic() + task["timeout"] + REPLY_MARGIN))
        if reply.get("nonce") != task["nonce"]:
            raise WorkerFailure("worker answered another task")
        return reply

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.log.close()
        if self.groups:
            for _ in range(150):  # the sandbox's processes die with it, a moment later
                if not any((p / "cgroup.procs").read_text().strip() for p in self.groups.paths):
                    break
                time.sleep(0.02)
            self.groups.remove()


class WorkerPool:
    """A few long-lived workers; each imports torch once and serves many tasks."""

    def __init__(self, size=None, hidden=()):
        self.isolation = choose_isolation()
        self.limits = describe_limits()
        self.size = size or max(1, min(2, os.cpu_count() or 1))
        self._dir = tempfile.mkdtemp(prefix="hero-worker-")
        here = Path(__file__).resolve().parent
        for name in WORKER_FILES:
            shutil.copy(here / name, self._dir)
        repo = here.parent
        hidden_paths = {str(repo), str(Path.home())} | {str(Path(p).resolve()) for p in hidden}
        if self.isolation == "bubblewrap":
            self._argv, self._env = _bwrap_argv(self._dir, sorted(hidden_paths)), {}
        else:
            self._argv = [sys.executable, "-I", "-B", os.path.join(self._dir, "worker.py")]
            self._env = {"PATH": "/usr/bin:/bin", "HOME": self._dir, "LANG": "C.UTF-8", "OMP_NUM_THREADS": "1"}
        self._idle = queue.Queue()
        self._all = []
        self._lock = threading.Lock()
        self._closed = False
        # start every worker at once, in the background: their torch imports overlap
        self._starting = [threading.Thread(target=self._spawn, daemon=True) for _ in range(self.size)]
        for thread in self._starting:
            thread.start()
        atexit.register(self.close)

    def _spawn(self):
        try:
            worker = Worker(self._argv, self._env, self._dir)
        except Exception as exc:  # reported when a task asks for a worker
            self._idle.put(exc)
            return
        with self._lock:
            self._all.append(worker)
        self._idle.put(worker)

    def run(self, task):
        """Run one task; a dead or hung worker is replaced and the task reported lost."""
        worker = self._idle.get()
        if isinstance(worker, Exception):
            self._idle.put(worker)
            raise SandboxUnavailable(f"no grading worker could start ({self.isolation}): {worker}")
        try:
            reply = worker.run(task)
        except WorkerFailure:
            self._retire(worker)
            threading.Thread(target=self._spawn, daemon=True).start()
            raise
        self._idle.put(worker)
        return reply

    def _retire(self, worker):
        with self._lock:
            if worker in self._all:
                self._all.remove(worker)
        worker.close()

    def close(self):
        if self._closed:
            return
        self._closed = True
        for thread in self._starting:
            thread.join()
        with self._lock:
            workers, self._all = self._all, []
        for worker in workers:
            worker.close()
        shutil.rmtree(self._dir, ignore_errors=True)

"""Worker processes that run student code, and the sandbox around them.

Isolation modes (HERO_SANDBOX selects one; the default is `auto`):
- `bubblewrap`: each worker runs under bwrap in a fresh root that holds only the
  system's /usr, /etc and /lib*, the Python environment (read-only) and the
  worker's own files: the repository, the course, the solutions, the gradebook,
  home folders and other submissions are not in its mount namespace at all.
  Its own PID, IPC, network, UTS and cgroup namespaces; writable only an empty
  /tmp and /dev/shm, emptied after every task.  The worker then drops to an
  unprivileged uid with no capabilities, sets no_new_privs and loads a seccomp
  filter (autograder/confine.py), and refuses to serve unless the kernel confirms
  all of it.  Started by root, bwrap keeps only CAP_SETUID/CAP_SETGID for that
  drop; started by an ordinary user, bwrap maps that user to the same uid inside a
  user namespace and keeps no capability at all.
- `process`: a plain child process with a cleared environment, `python -I`, the
  seccomp filter and no_new_privs, but the grading user's files and privileges.
  It does not isolate and is refused for root unless asked for by name.
`auto` picks bubblewrap when `bwrap` runs here, else `process` (not for root).

Each task travels on pipes of its own (see `Worker.run`): only that task's
process holds its reply pipe, and the worker's control socket is closed in it.
"""

import atexit
import errno
import glob
import json
import os
import queue
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from functools import lru_cache
from pathlib import Path

MAX_REPLY_BYTES = 16 * 1024 * 1024  # as wire.MAX_REPLY_BYTES; this module imports no torch
WORKER_FILES = ("worker.py", "probes.py", "wire.py", "confine.py", "safefiles.py", "reach.py")
SANDBOX_WORKER_DIR = "/opt/hero-worker"  # a folder of the sandbox's own root, outside its scratch /tmp
START_TIMEOUT = 120.0  # importing torch on a cold, loaded machine
REPLY_MARGIN = 15.0  # the worker kills a task itself; this only catches a dead worker
DRAIN_TIME = 2.0  # after the worker says a task ended, its pipes close at once; bound the wait anyway
MAX_CAPTURE_TAIL = 4000  # bytes of a task's prints kept for the report
SYSTEM_DIRS = ("/usr", "/etc")


class WorkerFailure(Exception):
    """The worker died or stopped answering; the current task is lost, not the run."""


class TaskNotStarted(WorkerFailure):
    """The task could not be handed to the worker (no descriptor or memory for its pipes, say):
    that task is lost, the worker never saw it and serves the next one."""


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
        raise SandboxUnavailable("HERO_SANDBOX=bubblewrap but bwrap is missing or fails here")
    if os.geteuid() == 0:
        raise SandboxUnavailable(
            "bwrap is missing or fails here, and without it student code would run as root; install "
            "bubblewrap (apt-get install bubblewrap), or set HERO_SANDBOX=process to accept that")
    return "process"


def _inside(path, folder):
    try:
        Path(path).resolve().relative_to(Path(folder).resolve())
        return True
    except ValueError:
        return False


def python_roots():
    """Folders the interpreter and its packages live in: bound read-only into the sandbox."""
    roots = {Path(p).resolve() for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)}
    for entry in sys.path:
        path = Path(entry or ".").resolve()
        if path.name in ("site-packages", "dist-packages") and path.is_dir():
            roots.add(path)
    # the outermost folders only, and none that the system folders already hold
    roots = {r for r in roots if not any(_inside(r, d) for d in SYSTEM_DIRS)}
    return sorted(r for r in roots if not any(other != r and _inside(r, other) for other in roots))


def _bwrap_argv(worker_dir, hidden):
    argv = [shutil.which("bwrap")]
    for path in SYSTEM_DIRS:
        argv += ["--ro-bind", path, path]
    for name in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(name):
            argv += ["--symlink", os.readlink(name), name]
        elif os.path.isdir(name):
            argv += ["--ro-bind", name, name]
    # the scratch folders first: a Python environment that lives under /tmp (a clone in a
    # temporary folder, say) is then bound on top of the scratch tmpfs, not hidden by it
    argv += [
        "--proc", "/proc", "--dev", "/dev",
        # a GPU's device nodes, where there is one: the CUDA equivalence checks run in the sandbox too
        *[arg for node in sorted(glob.glob("/dev/nvidia*")) for arg in ("--dev-bind", node, node)],
        # bounded in size: a task that fills them gets ENOSPC, not the grading machine's memory
        "--perms", "1777", "--size", str(SCRATCH_BYTES), "--tmpfs", "/tmp",
        "--perms", "1777", "--size", str(SCRATCH_BYTES), "--tmpfs", "/dev/shm",
    ]
    roots = python_roots()
    # bwrap makes the folders leading to a bind point private to root; the sandbox's uid must pass
    leading = sorted({str(a) for r in [*roots, Path(SANDBOX_WORKER_DIR)] for a in r.parents if str(a) != "/"})
    for folder in leading:
        if not any(_inside(folder, d) for d in SYSTEM_DIRS):
            argv += ["--perms", "0755", "--dir", folder]
    for root in roots:
        argv += ["--ro-bind", str(root), str(root)]
    # a course root, repository or home folder inside one of those still stays out of sight
    for path in hidden:
        if any(_inside(path, bound) for bound in [*SYSTEM_DIRS, *roots]):
            argv += ["--tmpfs", str(path)]
            argv += [arg for root in roots if _inside(root, path) for arg in ("--ro-bind", str(root), str(root))]
    argv += [
        "--ro-bind", str(worker_dir), SANDBOX_WORKER_DIR,
        "--remount-ro", "/",
        "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
        # the worker is PID 1 itself: no bwrap reaper (dumpable, same uid) for a task to open or
        # trace, a worker that its tasks cannot signal, and a namespace that dies with it
        "--as-pid-1",
        # no --die-with-parent: it fires when the *thread* that started bwrap ends; a worker
        # instead exits when its control socket closes, which happens when the grader goes away
        "--new-session", "--chdir", "/tmp",
        "--clearenv", "--setenv", "PATH", "/usr/bin:/bin", "--setenv", "HOME", "/tmp",
        "--setenv", "LANG", "C.UTF-8", "--setenv", "OMP_NUM_THREADS", "1", "--setenv", "OPENBLAS_NUM_THREADS", "1",
        "--setenv", "HERO_PID_NAMESPACE", "1",
        "--setenv", "MPLCONFIGDIR", "/tmp/matplotlib", "--setenv", "IPYTHONDIR", "/tmp/ipython",
        # the worker asks whether CUDA exists without initialising it, so its forked tasks still can
        "--setenv", "PYTORCH_NVML_BASED_CUDA_CHECK", "1",
    ]
    if os.geteuid() == 0:
        # no user namespace: the worker turns into a real unprivileged uid (confine.py), for which
        # it keeps these two capabilities until then; every other one is gone already
        argv += ["--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    else:
        from .confine import SANDBOX_GID, SANDBOX_UID

        argv += ["--unshare-user", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_GID), "--cap-drop", "ALL"]
    return argv + [sys.executable, "-I", "-B", f"{SANDBOX_WORKER_DIR}/worker.py"]


# Limits on what student code may use.  A memory bomb or a fork bomb must cost one
# exercise, never the machine, and a busy task must not take another's CPU.  Each task is one
# single-threaded process (confine.forbid_new_processes) with a CPU-time limit, wherever this
# runs.  Where the grading user may create cgroups (v1 or v2), each worker also gets a pids,
# a memory and a cpu group: at most PIDS_MAX processes, MEMORY_MAX bytes and one CPU, with the
# default weight, so workers share the machine equally; the worker also caps each task's
# address space (RLIMIT_AS), which works everywhere.
PIDS_MAX = 256
MEMORY_MAX = 6 * 1024**3  # per worker: torch's own footprint plus generous room
CPU_PERIOD = 100_000  # microseconds; a quota of one period per period is one CPU
SCRATCH_BYTES = 256 * 1024**2  # each of the sandbox's /tmp and /dev/shm
CGROUP_ROOT = Path("/sys/fs/cgroup")
V1_SETTINGS = (("pids", {"pids.max": PIDS_MAX}), ("memory", {"memory.limit_in_bytes": MEMORY_MAX}),
               ("cpu", {"cpu.cfs_period_us": CPU_PERIOD, "cpu.cfs_quota_us": CPU_PERIOD}))
V2_SETTINGS = {"pids.max": PIDS_MAX, "memory.max": MEMORY_MAX, "cpu.max": f"{CPU_PERIOD} {CPU_PERIOD}"}

# A task's limits: its own CPU time decides (seconds, --timeout); the wall clock only stops a
# task that sleeps or blocks, after WALL_FACTOR times that plus WALL_EXTRA seconds.  A task that
# reaches the wall clock while it mostly waited for a CPU was starved by other work on the
# machine: it is run again, up to STARVED_RERUNS times (engine._safe_run).
WALL_FACTOR, WALL_EXTRA = 3.0, 20.0
STARVED_SHARE = 0.5  # a task that waited for a CPU this share of its wall time was starved, not slow


def wall_cap(cpu_seconds):
    return WALL_FACTOR * float(cpu_seconds) + WALL_EXTRA


def cgroup_version():
    """2 for a unified hierarchy, 1 for per-controller hierarchies, None where there is none."""
    if (CGROUP_ROOT / "cgroup.controllers").exists():
        return 2
    if all((CGROUP_ROOT / controller).is_dir() for controller, _ in V1_SETTINGS):
        return 1
    return None


class ControlGroups:
    """One worker's pids, memory and cpu groups (v1: one per controller; v2: one group with all
    three), removed when it closes."""

    def __init__(self, name):
        self.paths = []
        try:
            if cgroup_version() == 2:
                _enable_v2_controllers()
                self._make(CGROUP_ROOT / name, V2_SETTINGS)
            else:
                for controller, settings in V1_SETTINGS:
                    self._make(CGROUP_ROOT / controller / name, settings)
        except OSError:
            self.remove()
            raise

    def _make(self, path, settings):
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


def _enable_v2_controllers():
    """A v2 group has a controller only when its parent delegates it (cgroup.subtree_control)."""
    control = CGROUP_ROOT / "cgroup.subtree_control"
    enabled = control.read_text().split()
    missing = [name for name in ("pids", "memory", "cpu") if name not in enabled]
    if missing:
        control.write_text(" ".join("+" + name for name in missing))


def group_name(label):
    """A cgroup name owned by this process: `hero-<pid>-<label>`."""
    return f"hero-{os.getpid()}-{label}"


def _owner_alive(name):
    try:
        os.kill(int(name.split("-")[1]), 0)
    except (IndexError, ValueError, ProcessLookupError):
        return False
    except PermissionError:  # alive, another user's
        return True
    return True


@lru_cache(maxsize=None)
def cgroups_work():
    if cgroup_version() is None:
        return False
    try:
        probe = ControlGroups(group_name("probe"))
    except OSError:
        return False
    probe.remove()
    # groups an earlier run left behind (its processes were still dying when it ended); only
    # groups whose owning process is gone: another run's groups are empty between their
    # creation and their first worker, and must not vanish under it
    for stale in [*CGROUP_ROOT.glob("*/hero-*"), *CGROUP_ROOT.glob("hero-*")]:
        if stale.is_dir() and not _owner_alive(stale.name):
            try:
                stale.rmdir()
            except OSError:
                pass
    return True


def describe_confinement(state):
    """What a worker's kernel-confirmed state promises, in one line for the reports."""
    if not state:
        return ""
    capabilities = "no capabilities" if not any(int(v or "0", 16) for v in state["capabilities"].values()) \
        else "capabilities held"
    flags = [name for name in ("no_new_privs", "seccomp") if state.get(name)]
    return f"uid {state['uid']}, {capabilities}, " + ", ".join(flags)


def describe_limits():
    per_task = "each task one single-threaded process with a CPU-time limit and an address-space cap"
    if cgroups_work():
        return (f"cgroup v{cgroup_version()}: {PIDS_MAX} processes, {MEMORY_MAX // 1024**3} GiB and one CPU per "
                f"worker; {per_task}")
    return f"{per_task} (no writable cgroup here: no per-worker memory or CPU share)"


def _wait(readers, writers, seconds):
    """(readable, writable) among `readers` and `writers` (descriptors or sockets) within
    `seconds`.  poll, not select: select refuses any descriptor numbered 1024 or more, and a
    grader holding many files open (a large class, a walk) must still run its tasks."""
    poller = select.poll()
    events = {}
    for item in readers:
        events[item] = events.get(item, 0) | select.POLLIN
    for item in writers:
        events[item] = events.get(item, 0) | select.POLLOUT
    by_fd = {}
    for item, mask in events.items():
        fd = item if isinstance(item, int) else item.fileno()
        by_fd[fd] = item
        poller.register(fd, mask)
    ready_r, ready_w = [], []
    for fd, happened in poller.poll(max(0.0, seconds) * 1000):
        item = by_fd[fd]
        # a closed peer (POLLHUP) or an error reads as readable/writable: the read or write says which
        if happened & (select.POLLIN | select.POLLHUP | select.POLLERR) and item in readers:
            ready_r.append(item)
        if happened & (select.POLLOUT | select.POLLHUP | select.POLLERR) and item in writers:
            ready_w.append(item)
    return ready_r, ready_w


class Worker:
    """One sandboxed worker process and the control socket to it."""

    def __init__(self, argv, env, cwd):
        self.log = tempfile.TemporaryFile()
        self.groups = ControlGroups(group_name(id(self))) if cgroups_work() else None
        self.control, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        with theirs:
            self.proc = subprocess.Popen(argv, stdin=theirs.fileno(), stdout=self.log, stderr=self.log, env=env,
                                         cwd=cwd)
        if self.groups:
            # before any task arrives: every process the worker forks inherits the groups
            self.groups.add(self.proc.pid)
        self.retire = None
        hello = self._receive(time.monotonic() + START_TIMEOUT, starting=True)
        if not hello.get("ready"):
            raise WorkerFailure("the sandbox is not confined: " + "; ".join(hello.get("problems", [])))
        self.state = hello.get("state", {})
        self.devices = hello.get("devices", ["cpu"])

    def _receive(self, deadline, starting=False):
        left = max(0.0, deadline - time.monotonic())
        if not _wait([self.control], [], left)[0]:
            raise WorkerFailure("worker stopped answering")
        message = self.control.recv(65536)
        if not message:
            # the worker's own log is for the instructor (a failed start), never a student's feedback
            raise WorkerFailure("worker exited" + (": " + self.stderr_tail() if starting else ""))
        return json.loads(message)

    def stderr_tail(self):
        self.log.seek(0)
        return self.log.read()[-2000:].decode("utf-8", "replace")

    def run(self, data: bytes, timeout: float):
        """Run one task on pipes of its own; return (status, reply bytes, printed tail, usage).
        `timeout` is the task's CPU time in seconds; usage says what it used (cpu, wall and
        waited seconds, and which limit stopped it, if one did).

        The worker receives the task's ends of three fresh pipes and forks a child that holds
        them alone; this side writes the task and reads the reply and the prints.  The reply is
        capped (a reply bomb costs its task) and judged by the caller, never trusted here."""
        pipes = []
        try:
            for _ in range(3):
                pipes += os.pipe()
        except OSError as exc:  # EMFILE, ENFILE, ENOMEM: this side cannot start the task
            for fd in pipes:
                os.close(fd)
            raise TaskNotStarted(f"the grader could not start this task: {exc}") from exc
        task_r, task_w, reply_r, reply_w, capture_r, capture_w = pipes
        try:
            order = {"timeout": timeout, "wall": wall_cap(timeout), "starved_share": STARVED_SHARE}
            socket.send_fds(self.control, [json.dumps(order).encode()], [task_r, reply_w, capture_w])
        except OSError as exc:
            for fd in pipes:
                os.close(fd)
            if exc.errno in (errno.EMFILE, errno.ENFILE, errno.ENOMEM, errno.ENOBUFS):  # this side's shortage
                raise TaskNotStarted(f"the grader could not start this task: {exc}") from exc
            raise WorkerFailure(f"worker exited: {exc}") from exc
        for fd in (task_r, reply_w, capture_w):
            os.close(fd)
        os.set_blocking(task_w, False)
        reply, captured, done = bytearray(), b"", None
        too_large = False
        deadline = time.monotonic() + wall_cap(timeout) + REPLY_MARGIN
        readers = {reply_r, capture_r}
        writers = {task_w}
        try:
            while readers or done is None:
                now = time.monotonic()
                if now > deadline:
                    raise WorkerFailure("worker stopped answering")
                if done is not None:  # the task's processes are gone: drain what is left, briefly
                    deadline = min(deadline, now + DRAIN_TIME)
                watch = list(readers) + ([self.control] if done is None else [])
                ready_r, ready_w = _wait(watch, list(writers), deadline - now)
                if task_w in ready_w:
                    try:
                        written = os.write(task_w, data[:1 << 16])
                        data = data[written:]
                    except (BrokenPipeError, BlockingIOError):
                        data = b""
                    if not data:
                        os.close(task_w)
                        writers.clear()
                for fd in ready_r:
                    if fd is self.control:
                        done = self._receive(deadline)
                        continue
                    chunk = os.read(fd, 1 << 20)
                    if not chunk:
                        readers.discard(fd)
                    elif fd == capture_r:
                        captured = (captured + chunk)[-MAX_CAPTURE_TAIL:]
                    elif len(reply) + len(chunk) > MAX_REPLY_BYTES:
                        too_large = True
                        readers.discard(fd)  # closing it below breaks the writer's pipe
                    else:
                        reply += chunk
        finally:
            if writers:
                os.close(task_w)
            os.close(reply_r)
            os.close(capture_r)
        status = done.get("status") if isinstance(done, dict) else None
        self.retire = done.get("retire") if isinstance(done, dict) else None
        if self.retire:
            outcome = "tampered"
        elif status in ("timeout", "starved"):
            outcome = status
        elif too_large:
            outcome = "too_large"
        elif status == "exited":
            outcome = "ok"
        else:
            raise WorkerFailure(f"worker answered {str(done)[:200]}")
        usage = {key: done.get(key) for key in ("cpu", "wall", "waited", "limit")}
        return outcome, bytes(reply), captured.decode("utf-8", "replace"), usage

    def close(self):
        self.control.close()
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


def _readable_by_the_sandbox_only(folder):
    """The worker's files (the chapters' probes hold the cases' inputs and the test doubles) for the
    sandbox alone, never for the machine's other users (a student on a shared hub copied them while
    a class was graded).  As root the sandbox becomes SANDBOX_UID:SANDBOX_GID before it reads them,
    so the group gives it read access; otherwise the user namespace maps this user to the sandbox."""
    from .confine import SANDBOX_GID

    owner_only = os.geteuid() != 0
    for name in os.listdir(folder):
        path = os.path.join(folder, name)
        if not owner_only:
            os.chown(path, 0, SANDBOX_GID)
        os.chmod(path, 0o600 if owner_only else 0o640)
    if not owner_only:
        os.chown(folder, 0, SANDBOX_GID)
    os.chmod(folder, 0o700 if owner_only else 0o750)


class WorkerPool:
    """A few long-lived workers; each imports torch once and serves many tasks."""

    def __init__(self, size=None, hidden=()):
        self.isolation = choose_isolation()
        self._limits = describe_limits()
        self.confinement = ""  # what the kernel confirmed in the first worker (see confine.state)
        self.devices = ["cpu"]  # what the first worker can compute on, found before any task ran
        self.size = size or max(1, min(2, os.cpu_count() or 1))
        self._dir = tempfile.mkdtemp(prefix="hero-worker-")
        here = Path(__file__).resolve().parent
        # the chapters' probes are not among them: each exercise task carries its own chapter's
        # (engine._plan), so the sandbox holds no file of them and a task no other chapter's
        for name in WORKER_FILES:
            shutil.copy(here / name, os.path.join(self._dir, name))
        _readable_by_the_sandbox_only(self._dir)
        repo = here.parent
        hidden_paths = {str(repo), str(Path.home())} | {str(Path(p).resolve()) for p in hidden}
        if self.isolation == "bubblewrap":
            self._argv, self._env = _bwrap_argv(self._dir, sorted(hidden_paths)), {}
        else:
            self._argv = [sys.executable, "-I", "-B", os.path.join(self._dir, "worker.py")]
            self._env = {"PATH": "/usr/bin:/bin", "HOME": self._dir, "LANG": "C.UTF-8", "OMP_NUM_THREADS": "1",
                         "OPENBLAS_NUM_THREADS": "1"}
        self._idle = queue.Queue()
        self._all = []
        self._lock = threading.Lock()
        self._closed = False
        self._spawning = self.size  # workers being started: with self._all, those that may still serve
        # start every worker at once, in the background: their torch imports overlap
        self._starting = [threading.Thread(target=self._spawn, daemon=True) for _ in range(self.size)]
        for thread in self._starting:
            thread.start()
        atexit.register(self.close)

    def _spawn(self, tries=1):
        """Start one worker (`tries` times at most, a second apart) and put it, or why it failed,
        in the idle queue."""
        worker = None
        for attempt in range(tries):
            if self._closed:
                break
            try:
                worker = Worker(self._argv, self._env, self._dir)
                break
            except Exception as exc:  # noqa: BLE001 - reported when a task asks for a worker
                failure = exc
                if attempt + 1 < tries:
                    time.sleep(1.0)
        with self._lock:
            self._spawning -= 1
            if worker is not None and self._closed:  # started while the pool closed: not served
                worker.close()
                return
            if worker is not None:
                self._all.append(worker)
                if not self.confinement:
                    self.confinement = describe_confinement(worker.state)
                    self.devices = worker.devices
        self._idle.put(worker if worker is not None else
                       failure if not self._closed else SandboxUnavailable("the grading pool is closed"))

    @property
    def limits(self):
        return "; ".join(part for part in (self.confinement, self._limits) if part)

    def _take(self):
        """An idle worker.  A failed start is passed over while another worker serves or is
        starting (the pool serves on, smaller); once none can ever come back (every start failed,
        or the pool closed) it stays in the queue for every caller to see: no caller waits forever."""
        while True:
            worker = self._idle.get()
            if self._closed:  # its workers are gone, whatever the queue still holds
                self._idle.put(worker)
                raise SandboxUnavailable("the grading pool is closed")
            if not isinstance(worker, Exception):
                return worker
            with self._lock:
                hopeless = self._closed or not (self._all or self._spawning)
            if hopeless:
                self._idle.put(worker)
                if isinstance(worker, SandboxUnavailable):
                    raise worker
                raise SandboxUnavailable(f"no grading worker could start ({self.isolation}): {worker}")

    def wait_ready(self):
        """Block until one worker has started (or raise if none could)."""
        self._idle.put(self._take())

    def run(self, task):
        """Run one task (a JSON-able dict with a "timeout"); return (status, reply bytes, prints, usage).
        A dead or hung worker is replaced and the task reported lost."""
        data = json.dumps(task).encode()
        worker = self._take()
        # whatever happens from here on, the worker goes back to the pool or is replaced: a
        # worker kept out of it for good would leave every later task waiting in _take
        try:
            reply = worker.run(data, float(task["timeout"]))
        except TaskNotStarted:
            self._idle.put(worker)  # it never saw the task
            raise
        except WorkerFailure:
            self._replace(worker)
            raise
        except BaseException as exc:  # a bug or a shortage on this side mid-task: the worker's state is unknown
            self._replace(worker)
            raise WorkerFailure(f"the grader could not run this task: {type(exc).__name__}: {exc}") from exc
        if worker.retire:
            self._replace(worker)
        else:
            self._idle.put(worker)
        return reply

    def _replace(self, worker):
        with self._lock:
            self._spawning += 1
        try:
            self._retire(worker)
        finally:
            try:
                # a few tries: the shortage that lost the old worker (descriptors, memory) may pass
                threading.Thread(target=self._spawn, kwargs={"tries": 3}, daemon=True).start()
            except BaseException as exc:  # no thread to start it (RuntimeError: can't start new thread)
                with self._lock:
                    self._spawning -= 1
                self._idle.put(exc if isinstance(exc, Exception) else RuntimeError(str(exc)))

    def _retire(self, worker):
        with self._lock:
            if worker in self._all:
                self._all.remove(worker)
        try:
            worker.close()
        except OSError:  # its log or groups could not be tidied: it is gone all the same
            pass

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
        self._idle.put(SandboxUnavailable("the grading pool is closed"))  # wakes any caller still waiting
        shutil.rmtree(self._dir, ignore_errors=True)

"""The sandboxed worker: the only process that ever runs student code.

It imports torch once, then serves tasks read as JSON lines on stdin.  For each
task it forks a child that loads the student's files from memory, runs the
probes (or the notebook's answer cells) and writes plain JSON back on a
private pipe.  The child is killed when it overruns its time; its prints go to
a capture pipe, never to the protocol stream.  This file holds no solution
code and imports nothing from the course package.
"""

import builtins
import importlib.abc
import importlib.util
import json
import linecache
import os
import select
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402  (imported once, shared by every forked child)

import probes  # noqa: E402

MAX_RESULT_BYTES = 16 * 1024 * 1024
STDERR_TAIL = 4000
SUBMISSION_ROOT = "/submission"


class MemoryFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports the student's modules from the texts the grader sent."""

    def __init__(self, files):
        self.files = files

    def _path(self, fullname):
        base = fullname.replace(".", "/")
        for candidate, is_package in ((base + "/__init__.py", True), (base + ".py", False)):
            if candidate in self.files:
                return candidate, is_package
        return None, False

    def find_spec(self, fullname, path=None, target=None):
        relpath, is_package = self._path(fullname)
        if relpath is None:
            return None
        spec = importlib.util.spec_from_loader(fullname, self, is_package=is_package)
        spec.origin = f"{SUBMISSION_ROOT}/{relpath}"
        spec.has_location = True
        if is_package:
            spec.submodule_search_locations = [f"{SUBMISSION_ROOT}/{os.path.dirname(relpath)}"]
        return spec

    def exec_module(self, module):
        origin = module.__spec__.origin
        relpath = origin[len(SUBMISSION_ROOT) + 1:]
        source = self.files[relpath]
        linecache.cache[origin] = (len(source), None, source.splitlines(True), origin)
        module.__file__ = origin
        try:
            code = compile(source, origin, "exec")
        except SyntaxError as exc:
            LOAD_PROBLEMS.append(f"{relpath} line {exc.lineno}: SyntaxError: {exc.msg}")
            exec_in_blocks(source, origin, module.__dict__)
            return
        if not relpath.endswith("/__init__.py"):
            exec(code, module.__dict__)
            return
        try:
            exec(code, module.__dict__)
        except Exception as exc:  # a package's re-exports must not block its modules
            LOAD_PROBLEMS.append(f"{relpath}: {type(exc).__name__}: {exc}")


LOAD_PROBLEMS = []  # what went wrong while loading the student's files, for the report


def exec_in_blocks(source, origin, namespace):
    """Run a file that does not compile one top-level block at a time, skipping the
    blocks that do not compile: a syntax error costs only the definitions it sits in."""
    lines = source.splitlines(True)
    starts = [0]
    for index, line in enumerate(lines):
        opens_block = line[:1].isalpha() or line[:1] in "_@"
        after_decorator = index > 0 and lines[index - 1].startswith("@")
        if index and opens_block and not after_decorator:
            starts.append(index)
    for start, end in zip(starts, starts[1:] + [len(lines)]):
        text = "\n" * start + "".join(lines[start:end])  # keep line numbers
        try:
            code = compile(text, origin, "exec")
        except SyntaxError:
            continue
        try:
            exec(code, namespace)
        except Exception as exc:
            LOAD_PROBLEMS.append(f"{origin[len(SUBMISSION_ROOT) + 1:]} line {start + 1}: {type(exc).__name__}: {exc}")


def run_exercise(task):
    module = __import__("hero_transformer.model", fromlist=["model"])
    devices = ["cpu"]
    if torch.cuda.is_available():
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        devices.append("cuda")
    cases = {name: {key: probes.decode(value) for key, value in case.items()} for name, case in task["cases"].items()}
    outputs = {device: probes.run_all(module, task["exercise"], cases, device) for device in devices}
    return {"devices": devices, "outputs": outputs}


def make_shell():
    """An IPython shell (magics, input transformers) without history; built once, before any fork."""
    from traitlets.config import Config
    from IPython.core.interactiveshell import InteractiveShell

    config = Config()
    config.HistoryManager.enabled = False
    return InteractiveShell.instance(config=config)


class CellTimeout(BaseException):
    """Like KeyboardInterrupt: a student's `except Exception` (or the lenient package
    __init__ loading) must not swallow it."""


def _cell_timed_out(signum, frame):
    raise CellTimeout("this cell ran past its time limit and was stopped")


def run_notebook(task):
    shell = make_shell()  # the instance the parent built: each forked child gets a pristine copy
    failures = []
    # what one cell installs must not rewrite the cells after it, nor the grader's own reading
    transformers = {name: list(getattr(shell, name)) for name in
                    ("input_transformers_cleanup", "input_transformers_post", "ast_transformers")}
    pristine_builtins = dict(vars(builtins))
    # one cell that hangs (an import-time loop in the package, say) costs that cell, not the notebook
    signal.signal(signal.SIGALRM, _cell_timed_out)
    for index, source in task["cells"]:
        limit = float(task["cell_timeout"])
        signal.setitimer(signal.ITIMER_REAL, limit, limit)  # repeats, should the first one be caught
        try:
            result = shell.run_cell(source, store_history=False, silent=False)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        vars(builtins).update(pristine_builtins)  # patched builtins end with the cell that patched them
        for name, original in transformers.items():
            getattr(shell, name)[:] = original
        error = result.error_before_exec or result.error_in_exec
        if error is not None:
            failures.append({"cell": index, **probes.describe(error)})
    values = {}
    for name in task["variables"]:
        if name not in shell.user_ns:
            values[name] = {"missing": True}
            continue
        try:
            values[name] = {"ok": probes.encode(shell.user_ns[name])}
        except Exception as exc:
            values[name] = {"raised": probes.describe(exc)}
    return {"values": values, "cell_failures": failures[:20]}


def child(task, result_fd, capture_fd):
    """Runs in the forked child; never returns."""
    code = 0
    try:
        os.setsid()
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(capture_fd, 1)
        os.dup2(capture_fd, 2)
        os._exit = refuse_exit  # a student's os._exit ends their code, not the task's report
        # keep only stdio and the result pipe: the protocol stream stays out of reach
        os.closerange(3, result_fd)
        os.closerange(result_fd + 1, 1 << 16)
        sys.stdin = open(os.devnull)
        torch.set_num_threads(1)
        limit_address_space()
        sys.meta_path.insert(0, MemoryFinder(task["files"]))
        sys.dont_write_bytecode = True
        try:
            body = run_exercise(task) if task["kind"] == "exercise" else run_notebook(task)
            body["load_problems"] = LOAD_PROBLEMS[:10]
            payload = {"nonce": task["nonce"], "body": body}
        except BaseException as exc:  # import errors, syntax errors, SystemExit at import...
            payload = {"nonce": task["nonce"], "failed": probes.describe(exc), "load_problems": LOAD_PROBLEMS[:10]}
        data = json.dumps(payload).encode()
        with os.fdopen(result_fd, "wb") as out:
            out.write(data)
    except BaseException:
        code = 3
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()  # _exit skips it, and the student's prints belong in the report
            except Exception:
                pass
        REAL_EXIT(code)


REAL_EXIT = os._exit


def refuse_exit(code=0):
    raise SystemExit(f"os._exit({code}) was called")


def serve_one(task):
    result_r, result_w = os.pipe()
    capture_r, capture_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(result_r)
        os.close(capture_r)
        child(task, result_w, capture_w)
    os.close(result_w)
    os.close(capture_w)
    deadline = time.monotonic() + float(task["timeout"])
    chunks, size, captured = [], 0, b""
    status, exited = "ok", None
    open_fds = {result_r, capture_r}
    # read until the child has exited and its pipes are drained; a grandchild holding the
    # pipes open does not keep the task alive
    while open_fds:
        left = deadline - time.monotonic()
        if left <= 0:
            status = "timeout"
            break
        ready, _, _ = select.select(list(open_fds), [], [], 0 if exited is not None else min(left, 0.05))
        if not ready and exited is not None:
            break
        for fd in ready:
            data = os.read(fd, 65536)
            if not data:
                open_fds.discard(fd)
            elif fd == capture_r:
                captured = (captured + data)[-STDERR_TAIL:]
            else:
                size += len(data)
                chunks.append(data)
        if size > MAX_RESULT_BYTES:
            status = "too_large"
            break
        if exited is None:
            done, wait_status = os.waitpid(pid, os.WNOHANG)
            if done:
                exited = wait_status
    try:
        os.killpg(pid, signal.SIGKILL)  # anything still in the child's process group
    except (ProcessLookupError, PermissionError):
        pass
    if exited is None:
        _, exited = os.waitpid(pid, 0)
    sweep()
    os.close(result_r)
    os.close(capture_r)
    reply = {"nonce": task["nonce"], "status": status, "output_tail": captured.decode("utf-8", "replace")}
    if status == "ok":
        try:
            reply["payload"] = json.loads(b"".join(chunks).decode())
        except ValueError:
            reply["status"] = "crashed"
            reply["exit"] = os.waitstatus_to_exitcode(exited)
    return reply


TASK_MEMORY = 3 * 1024**3  # bytes of address space a task may add to what the worker maps


def limit_address_space():
    """A memory bomb raises MemoryError in its own task instead of exhausting the machine.
    Skipped with CUDA, whose driver reserves far more address space than it uses."""
    if torch.cuda.is_available():
        return
    import resource

    with open("/proc/self/status") as status:
        mapped = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmSize:"))
    resource.setrlimit(resource.RLIMIT_AS, (mapped + TASK_MEMORY, mapped + TASK_MEMORY))


def sweep():
    """In the sandbox's own PID namespace, kill whatever a task left behind (a detached
    grandchild, say) so that nothing of one task outlives it into the next."""
    if os.environ.get("HERO_PID_NAMESPACE") != "1":
        return  # outside a namespace these would be the machine's processes
    keep = {1, os.getpid(), os.getppid()}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) not in keep:
            try:
                os.kill(int(entry), signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass


def forbid_tracing():
    """Children run as the same user: without this they could rewrite this process via /proc/<pid>/mem."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE = 0
    except (OSError, AttributeError):
        pass


def main():
    forbid_tracing()
    make_shell()
    protocol = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # stray prints from anything in this process never reach the protocol stream
    protocol.write(json.dumps({"ready": True, "torch": torch.__version__}) + "\n")
    protocol.flush()
    for line in sys.stdin:
        task = json.loads(line)
        protocol.write(json.dumps(serve_one(task)) + "\n")
        protocol.flush()


if __name__ == "__main__":
    main()

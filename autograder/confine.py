"""Least privilege for the worker, applied by the worker itself before any student code.

1. A worker started as root (the grader ran as root, and bubblewrap kept only
   CAP_SETUID/CAP_SETGID for this step) becomes SANDBOX_UID:SANDBOX_GID with no
   supplementary groups; the kernel then clears every capability.
2. no_new_privs: no set-uid binary or file capability can give anything back.
3. A seccomp filter, written with libseccomp (through `pyseccomp`), refuses the
   system calls that reach outside the task: mounts, namespaces, tracing and
   other processes' memory, keyrings, BPF, kernel modules, System V IPC (it
   would outlive a task), and more.  They fail with EPERM.
4. Each task's process also refuses clone, fork, vfork and execve (a second filter, stacked
   after the fork): a task is exactly one single-threaded process.
5. The worker is not dumpable: a task's process, running as the same user, can
   neither open /proc/<worker>/fd|mem nor trace it.

`state()` reads back what the kernel says (uid, capabilities, no_new_privs,
seccomp mode) so that the worker can refuse to serve when a step did not hold.
This file imports only the standard library and pyseccomp.
"""

import ctypes
import errno
import os

SANDBOX_UID = SANDBOX_GID = 65534  # nobody / nogroup

# System calls no task needs: each would let student code leave its sandbox, watch or change
# another process, or leave something behind for the next task.
DENIED = (
    # file systems and namespaces
    "mount", "umount2", "pivot_root", "chroot", "unshare", "setns", "move_mount", "open_tree", "fsopen", "fsmount",
    "fsconfig", "fspick", "mount_setattr", "name_to_handle_at", "open_by_handle_at",
    # other processes
    "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp", "process_madvise",
    # kernel objects that outlive a process
    "keyctl", "add_key", "request_key", "shmget", "shmat", "msgget", "msgsnd", "semget", "semop", "mq_open",
    # the kernel itself
    "bpf", "perf_event_open", "userfaultfd", "init_module", "finit_module", "delete_module", "kexec_load",
    "kexec_file_load", "reboot", "swapon", "swapoff", "syslog", "acct", "quotactl", "lookup_dcookie",
    "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "sethostname", "setdomainname", "iopl", "ioperm",
    "personality", "io_uring_setup", "io_uring_enter", "io_uring_register",
)
# Calls that may act on another process of the same uid (the worker itself), allowed on the
# caller alone: (system call, argument index, the only value allowed there).  A pid of 0 is
# the caller; setpriority and ioprio_set must also name one process, not a group or a user.
OWN_PROCESS_ONLY = (("prlimit64", 0, 0), ("sched_setaffinity", 0, 0), ("sched_setscheduler", 0, 0),
                    ("sched_setparam", 0, 0), ("sched_setattr", 0, 0), ("migrate_pages", 0, 0),
                    ("move_pages", 0, 0), ("setpriority", 0, 0), ("setpriority", 1, 0),
                    ("ioprio_set", 0, 1), ("ioprio_set", 1, 0))
# CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET
CLONE_NAMESPACES = (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000)
PR_SET_NO_NEW_PRIVS, PR_SET_DUMPABLE = 38, 4


def _prctl(option, value):
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(option, value, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), f"prctl({option}) failed")


def drop_privileges(drop_root):
    if drop_root and (os.getuid() == 0 or os.geteuid() == 0):
        os.setgroups([])
        os.setresgid(SANDBOX_GID, SANDBOX_GID, SANDBOX_GID)
        os.setresuid(SANDBOX_UID, SANDBOX_UID, SANDBOX_UID)  # clears the permitted and effective sets
    _clear_capabilities()  # the inheritable set survives setresuid
    _prctl(PR_SET_NO_NEW_PRIVS, 1)


def _clear_capabilities():
    """capset(2) with every set empty (version 3 header: two 32-bit words per set)."""
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)
    data = (ctypes.c_uint32 * 6)()
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.capset(header, data) != 0:
        raise OSError(ctypes.get_errno(), "capset failed")


def install_seccomp():
    import pyseccomp as seccomp

    rules = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    for name in DENIED:
        try:
            rules.add_rule(seccomp.ERRNO(errno.EPERM), name)
        except (ValueError, OSError, RuntimeError):  # unknown to this kernel's headers
            pass
    # clone with a namespace flag: no new namespaces from inside; clone3 hides its flags in
    # memory a filter cannot read, so it reports "not implemented" and libc falls back to clone
    # any other pid (even the caller's own number) is refused, so the worker is out of reach
    for name, index, allowed in OWN_PROCESS_ONLY:
        rules.add_rule(seccomp.ERRNO(errno.EPERM), name, seccomp.Arg(index, seccomp.NE, allowed))
    for bit in CLONE_NAMESPACES:
        rules.add_rule(seccomp.ERRNO(errno.EPERM), "clone", seccomp.Arg(0, seccomp.MASKED_EQ, bit, bit))
    rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    rules.load()


# Calls that start a thread, a process or another program.  A task is one single-threaded
# Python process: its CPU time is that process's own (a limit the kernel enforces), it can use
# at most one core whatever it does, and every call it makes happens on the thread the
# forbidden-call watch is installed on (the watch is per thread; a fork's record would be lost).
NEW_PROCESS_CALLS = ("clone", "fork", "vfork", "execve", "execveat")


def forbid_new_processes():
    """Stack a second filter on the task's process (the worker keeps the first one): from now on
    it cannot start a thread (clone3 already answers ENOSYS, so libc falls back to clone), a
    process or a program.  Python then raises "can't start new thread" or PermissionError."""
    import pyseccomp as seccomp

    rules = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    for name in NEW_PROCESS_CALLS:
        try:
            rules.add_rule(seccomp.ERRNO(errno.EPERM), name)
        except (ValueError, OSError, RuntimeError):  # fork/vfork do not exist on some architectures
            pass
    rules.load()


def forbid_tracing():
    _prctl(PR_SET_DUMPABLE, 0)


def confine(drop_root):
    """drop_root is False only in the `process` mode, whose interpreter may live where
    SANDBOX_UID cannot read it (that mode does not promise isolation)."""
    drop_privileges(drop_root)
    install_seccomp()
    forbid_tracing()


def state():
    """What the kernel reports about this process."""
    fields = {}
    with open("/proc/self/status") as status:
        for line in status:
            key, _, value = line.partition(":")
            fields[key] = value.strip()
    return {
        "uid": os.getuid(), "euid": os.geteuid(), "gid": os.getgid(), "groups": os.getgroups(),
        "capabilities": {key: fields.get(key) for key in ("CapInh", "CapPrm", "CapEff", "CapAmb")},
        "no_new_privs": fields.get("NoNewPrivs") == "1", "seccomp": fields.get("Seccomp") == "2",
        "dumpable": ctypes.CDLL(None).prctl(3, 0, 0, 0, 0),  # PR_GET_DUMPABLE
    }


def problems(found):
    """Why `found` (a `state()`) falls short of least privilege; empty when it does not."""
    missing = []
    if 0 in (found["uid"], found["euid"], found["gid"]):
        missing.append(f"runs as uid {found['uid']} gid {found['gid']}")
    held = {key: value for key, value in found["capabilities"].items() if value and int(value, 16)}
    if held:
        missing.append(f"holds capabilities {held}")
    for flag in ("no_new_privs", "seccomp"):
        if not found[flag]:
            missing.append(f"no {flag}")
    if found["dumpable"]:
        missing.append("is dumpable")
    return missing

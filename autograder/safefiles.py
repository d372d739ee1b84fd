"""Reading a submission folder without trusting what it holds.

Every path inside the folder is walked one component at a time from an open
folder descriptor, with O_NOFOLLOW: a symbolic link is never followed, not even
in a folder part of the path, so a link to the reference, the solutions, the
gradebook or /proc reads nothing.  Only regular files are opened (O_NONBLOCK,
so a FIFO swapped in after the check cannot hang the grader), and only after
their size is checked.  Anything else (link, FIFO, device, socket) is refused
with a message that says what it is; it costs only the items that needed it.
"""

import os
import stat

FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
KINDS = ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
         (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder"))


def read_up_to(fd, limit):
    """What `fd` holds until its end, stopping once more than `limit` bytes have come."""
    chunks, size = [], 0
    while size <= limit:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


class Refused(Exception):
    """A path of the submission that is not a regular file of an acceptable size."""


def kind_of(mode):
    return next((name for test, name in KINDS if test(mode)), "not a regular file")


class Folder:
    """An open submission folder; `path` is trusted (the grader's caller chose it), its contents are not."""

    def __init__(self, path):
        self.path = os.path.realpath(path)
        self.fd = os.open(self.path, FOLDER_FLAGS)

    def close(self):
        os.close(self.fd)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _open_parent(self, relpath):
        """A descriptor of the folder holding `relpath`, reached without following links."""
        parts = relpath.split("/")
        fd = os.dup(self.fd)
        try:
            for index, part in enumerate(parts[:-1]):
                info = os.stat(part, dir_fd=fd, follow_symlinks=False)
                if not stat.S_ISDIR(info.st_mode):
                    raise Refused(f"{'/'.join(parts[:index + 1])} is {kind_of(info.st_mode)}, not a folder")
                inner = os.open(part, FOLDER_FLAGS, dir_fd=fd)
                os.close(fd)
                fd = inner
        except BaseException:
            os.close(fd)
            raise
        return fd, parts[-1]

    def read(self, relpath, limit):
        """The bytes of a regular file; Refused for anything else, FileNotFoundError when absent."""
        parent, name = self._open_parent(relpath)
        try:
            info = os.stat(name, dir_fd=parent, follow_symlinks=False)
            if not stat.S_ISREG(info.st_mode):
                raise Refused(f"{relpath} is {kind_of(info.st_mode)}; only regular files are graded")
            if info.st_size > limit:
                raise Refused(f"{relpath} is larger than {limit} bytes")
            try:
                fd = os.open(name, FILE_FLAGS, dir_fd=parent)
            except OSError as exc:  # ELOOP: it became a link after the check
                raise Refused(f"{relpath} could not be opened as a regular file ({exc.strerror})") from None
        finally:
            os.close(parent)
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
                raise Refused(f"{relpath} changed while it was read")
            data = read_up_to(fd, limit)
            if len(data) > limit:
                raise Refused(f"{relpath} is larger than {limit} bytes")
            return data
        finally:
            os.close(fd)

    def files(self, folder, suffix, max_files):
        """Relative paths of the regular files under `folder` ending in `suffix`, and the entries
        refused on the way (links, FIFOs, devices, sockets).  Links to folders are not entered."""
        found, refused = [], []
        try:
            parent, _ = self._open_parent(folder + "/.") if folder else (os.dup(self.fd), ".")
        except (FileNotFoundError, NotADirectoryError):
            return found, refused
        except Refused as exc:
            return found, [str(exc)]
        pending = [(parent, folder)]
        try:
            while pending:
                fd, prefix = pending.pop()
                try:
                    with os.scandir(fd) as entries:
                        for entry in sorted(entries, key=lambda e: e.name):
                            relpath = f"{prefix}/{entry.name}" if prefix else entry.name
                            mode = entry.stat(follow_symlinks=False).st_mode
                            if stat.S_ISDIR(mode):
                                if entry.name != "__pycache__":
                                    pending.append((os.open(entry.name, FOLDER_FLAGS, dir_fd=fd), relpath))
                            elif not stat.S_ISREG(mode):
                                if entry.name.endswith(suffix) or stat.S_ISLNK(mode):
                                    refused.append(f"{relpath} is {kind_of(mode)}; only regular files are graded")
                            elif entry.name.endswith(suffix) and len(found) < max_files:
                                found.append(relpath)
                finally:
                    os.close(fd)
        finally:
            for fd, _ in pending:
                os.close(fd)
        return sorted(found), refused

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
import time

FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
# A walk's own bounds (Folder.files): a submission of millions of entries, of folders nested
# thousands deep or on a slow disk costs only itself, and says which bound it met
MAX_WALK_ENTRIES = 100_000
MAX_WALK_DEPTH = 64
MAX_WALK_SECONDS = 120.0
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


class TooLarge(Refused):
    """A folder too large to walk: more files, entries or depth than a limit allows."""


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

    def _open_folder(self, relpath):
        """A descriptor of the folder `relpath` ("" for the top), reached without following links."""
        return self._open_parent(relpath + "/.")[0] if relpath else os.dup(self.fd)

    def files(self, folder, suffix, max_files, keep=None, enter=None, strict=False,
              max_entries=MAX_WALK_ENTRIES, max_depth=MAX_WALK_DEPTH, max_seconds=MAX_WALK_SECONDS):
        """Relative paths of the regular files under `folder` whose name ends in `suffix` (and
        that `keep(relpath)` accepts, when given), and the entries refused on the way (links,
        FIFOs, devices, sockets; with `keep`, only those it accepts).  Links to folders are not
        entered, nor `__pycache__`, nor a folder that `enter(relpath)` declines.

        The walk holds two descriptors at most, whatever the tree: the pending folders are kept
        as relative paths, each opened from the top (without following links) when its turn
        comes.  It is bounded, and no bound is silent.  A folder deeper than `max_depth` is not
        entered and is named among the refused entries.  More than `max_files` files kept, more
        than `max_entries` entries seen, or a walk longer than `max_seconds` stop the walk: with
        `strict`, TooLarge is raised (the caller refuses the folder whole); otherwise its message
        joins the refused entries and the files found until then are returned."""
        found, refused = [], []
        try:
            top = self._open_folder(folder)
        except (FileNotFoundError, NotADirectoryError):
            return found, refused
        except Refused as exc:
            return found, [str(exc)]
        seen, started = 0, time.monotonic()
        pending = [folder]  # relative paths only: an open descriptor per pending folder would not be bounded
        try:
            while pending:
                prefix = pending.pop()
                try:
                    fd = top if prefix == folder else self._open_folder(prefix)
                except (FileNotFoundError, NotADirectoryError):  # gone since it was listed
                    continue
                except Refused as exc:  # became a link since it was listed
                    refused.append(str(exc))
                    continue
                try:
                    listed = []
                    with os.scandir(fd) as entries:
                        for entry in entries:  # counted as listed: a folder of millions is never held whole
                            seen += 1
                            if seen > max_entries:
                                raise TooLarge(f"{folder or 'the submission'} holds more than {max_entries} files "
                                               f"and folders; nothing past {prefix or '.'}/ was read")
                            listed.append(entry)
                    subfolders = []
                    for entry in sorted(listed, key=lambda e: e.name):
                        relpath = f"{prefix}/{entry.name}" if prefix else entry.name
                        mode = entry.stat(follow_symlinks=False).st_mode
                        if stat.S_ISDIR(mode):
                            if entry.name != "__pycache__" and (enter is None or enter(relpath)):
                                if relpath.count("/") + 1 > max_depth:  # refused and named; the rest is read
                                    refused.append(f"{relpath} is nested more than {max_depth} folders deep; "
                                                   "nothing inside it was read")
                                else:
                                    subfolders.append(relpath)
                        elif not stat.S_ISREG(mode):
                            if (keep(relpath) if keep else entry.name.endswith(suffix) or stat.S_ISLNK(mode)):
                                refused.append(f"{relpath} is {kind_of(mode)}; only regular files are graded")
                        elif entry.name.endswith(suffix) and (keep is None or keep(relpath)):
                            if len(found) >= max_files:
                                raise TooLarge(f"{folder or 'the submission'} holds more than {max_files} files "
                                               f"to read; {relpath} and the files after it were not read")
                            found.append(relpath)
                    pending.extend(reversed(subfolders))  # depth first, in sorted order
                finally:
                    if fd != top:
                        os.close(fd)
                if time.monotonic() - started > max_seconds:
                    raise TooLarge(f"walking {folder or 'the submission'} took over {max_seconds:g} seconds; "
                                   f"nothing past {prefix or '.'}/ was read")
        except TooLarge as exc:
            if strict:
                raise
            refused.append(str(exc))
        finally:
            os.close(top)
        return sorted(found), refused

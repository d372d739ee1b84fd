"""nbgrader's exchange for a shared hub, where the operating system says who submitted.

nbgrader's own `collect` takes a submission's student from the inbound folder's name
(`<student>+<assignment>+<timestamp>+<random>`), keeps each name's latest timestamp, only logs
"cheating attempt?" when the folder belongs to someone else, copies with links followed and
stops everyone's collect at the first timestamp that does not parse.  On a hub's shared
exchange (a folder every student may write into) that lets one student submit as another, pin
a classmate's submission with a far-future date, or copy the instructor's course, another
student's work or /dev/zero into the submissions.

`HeroExchangeCollect` (installed by course/nbgrader_config.py) decides from the folder itself:

- the student is the user who made the folder (lstat, never followed); a folder whose name
  claims someone else, a user this machine does not know, a date that does not parse, a date
  later than the folder itself (beyond `clock_skew`) or long before it (backdated past
  `clock_skew + submit_seconds`) is refused;
- nothing inside is followed: every entry is opened from its folder's descriptor with
  O_NOFOLLOW, must be a regular file or a folder owned by that same student (so a hard link to
  another user's file is refused too), and counts against the entry, depth and size limits while
  it is copied; a link, FIFO, device or socket, a file of someone else's or a limit passed
  refuses the whole folder, never part of it;
- each student's latest acceptable folder is collected (with nbgrader's --update and
  --before-duedate rules): a refused folder is skipped and the next latest tried;
- every refusal is named, as an error in collect's output and as a line in
  `<course root>/exchange-refusals.log`, and collect goes on with everyone else.

The copy goes to a temporary folder beside the destination and is renamed into place, so a
refused or interrupted copy leaves the previous submission as it was.  Walking keeps one
descriptor per folder level (depth-first), not one per pending folder.

The release side (`HeroExchangeReleaseAssignment`, `HeroExchangeReleaseFeedback`) refuses to
write into a course, outbound, inbound or feedback folder of the exchange that is a link or
belongs to someone else (a student may create them first in the world-writable exchange root),
and gives inbound the sticky bit, so a student cannot rename or delete a classmate's folder.
Students keep nbgrader's own fetch, submit and list: what runs as a student decides nothing.
"""

import datetime
import fnmatch
import os
import pwd
import shutil
import stat
import tempfile

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.exchange.default import ExchangeCollect, ExchangeReleaseAssignment, ExchangeReleaseFeedback
from nbgrader.utils import parse_utc
from traitlets import Integer, Unicode

from .safefiles import FILE_FLAGS, FOLDER_FLAGS, kind_of

WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
CHUNK = 1 << 20
SECRET_MAX = 1024  # nbgrader's submit writes 128 hex digits


class Refused(Exception):
    """An inbound folder that is not collected, and why."""


def _user_name(uid):
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def _utc(seconds):
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).replace(tzinfo=None)


class HeroExchangeCollect(ExchangeCollect):
    """`nbgrader collect` that attributes each submission to the user who made its folder."""

    clock_skew = Integer(300, help="Seconds a submission's date may lie after the time its inbound folder "
                                   "was made (clocks of the hub's nodes and the exchange's disk may differ)."
                         ).tag(config=True)
    submit_seconds = Integer(120, help="Seconds a submission's date may lie before the time its inbound "
                                       "folder was made, or anything in it last changed (on top of clock_skew): "
                                       "how long a submit may take (it copies at most max_dir_size)."
                             ).tag(config=True)
    max_entries = Integer(2000, help="The most files and folders one submission may hold; more refuses it "
                                     "whole.").tag(config=True)
    max_depth = Integer(16, help="The deepest folder nesting one submission may have; deeper refuses it whole."
                        ).tag(config=True)
    refusals_log = Unicode("exchange-refusals.log", help="File, relative to the course root, to which collect "
                                                         "appends one line per refused inbound folder."
                           ).tag(config=True)

    # -- finding the folders -------------------------------------------------------------------

    def _own_folder(self, path):
        """`path` of the exchange, checked to be a real folder of the user running collect."""
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            self.fail(f"Course not found: {path}")
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
            self.fail(f"{path} is {kind_of(info.st_mode)} of {_user_name(info.st_uid)}, not a folder of yours: "
                      f"someone made it before the course was released; nothing collected")

    def init_src(self):
        if self.coursedir.course_id == "":
            self.fail("No course id specified. Re-run with --course flag.")
        self.course_path = os.path.join(self.root, self.coursedir.course_id)
        self.inbound_path = os.path.join(self.course_path, "inbound")
        self._own_folder(self.course_path)
        self._own_folder(self.inbound_path)
        self.refused = []
        assignment = self.coursedir.assignment_id
        wanted = self.coursedir.student_id if self.coursedir.student_id not in ("", "*") else None
        candidates = {}
        with os.scandir(self.inbound_path) as entries:
            for entry in entries:
                if f"+{assignment}+" not in entry.name:
                    continue  # another assignment's
                parts = entry.name.rsplit("+", 3)
                if wanted is not None and parts[0] != wanted:
                    continue
                try:
                    record = self._vet(entry, parts)
                except Refused as why:
                    self._refuse(entry.name, str(why))
                    continue
                candidates.setdefault(record["username"], []).append(record)

        with Gradebook(self.coursedir.db_url, self.coursedir.course_id) as gradebook:
            try:
                self.duedate = gradebook.find_assignment(assignment).duedate
            except MissingEntry:
                self.duedate = None
        self.src_records = []
        for records in candidates.values():
            records.sort(key=lambda r: r["timestamp"], reverse=True)
            if self.before_duedate and self.duedate is not None:
                records.sort(key=lambda r: r["timestamp"] > self.duedate)  # stable: on time first, latest first
            self.src_records.append(records)

    def _vet(self, entry, parts):
        """The record of one inbound folder, or Refused: who made it, and when it says it was made."""
        if len(parts) < 3 or parts[1] != self.coursedir.assignment_id:
            raise Refused("its name is not <student>+<assignment>+<timestamp>[+<random>]")
        student, claimed = parts[0], parts[2]
        info = entry.stat(follow_symlinks=False)
        if not stat.S_ISDIR(info.st_mode):
            raise Refused(f"it is {kind_of(info.st_mode)}, not a folder")
        try:
            uid = pwd.getpwnam(student).pw_uid
        except KeyError:
            raise Refused(f"it is named for {student!r}, a user this machine does not know; made by "
                          f"{_user_name(info.st_uid)}") from None
        if info.st_uid != uid:
            raise Refused(f"it is named for {student} but was made by {_user_name(info.st_uid)}: "
                          f"a submission in someone else's name")
        try:
            timestamp = parse_utc(claimed)
        except (ValueError, OverflowError):  # the parser's message would repeat the name's raw characters
            raise Refused(f"its timestamp {claimed!r} does not parse") from None
        made = _utc(info.st_ctime)
        if timestamp > made + datetime.timedelta(seconds=self.clock_skew):
            raise Refused(f"it is dated {timestamp:%Y-%m-%d %H:%M:%S} UTC, later than the folder itself "
                          f"(made {made:%Y-%m-%d %H:%M:%S} UTC): a date in the future")
        if timestamp < made - datetime.timedelta(seconds=self.clock_skew + self.submit_seconds):
            raise Refused(f"it is dated {timestamp:%Y-%m-%d %H:%M:%S} UTC, long before the folder itself "
                          f"(made {made:%Y-%m-%d %H:%M:%S} UTC): a backdated submission")
        return {"username": student, "uid": uid, "filename": entry.name, "timestamp": timestamp,
                "claimed": claimed, "device": info.st_dev, "inode": info.st_ino}

    def _refuse(self, name, reason):
        """Name a refused folder for the instructor: collect's output and the refusals log."""
        self.refused.append((name, reason))
        self.log.error("Not collected: inbound folder %r: %s", name, reason)
        line = (f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%dT%H:%M:%SZ}\t{self.coursedir.assignment_id}"
                f"\t{name!r}\t{reason}\n")
        with open(os.path.join(self.coursedir.root, self.refusals_log), "a", encoding="utf-8") as log:
            log.write(line)

    # -- copying ------------------------------------------------------------------------------

    def copy_files(self):
        assignment = self.coursedir.assignment_id
        collected = 0
        for records in sorted(self.src_records, key=lambda rs: rs[0]["username"]):
            student = records[0]["username"]
            dest = self.coursedir.format_path(self.coursedir.submitted_directory, student, assignment)
            existing = self.coursedir.get_existing_timestamp(dest) if os.path.isdir(dest) else None
            for record in records:
                if os.path.isdir(dest):
                    newer = existing is None or record["timestamp"] > existing
                    if not ((self.update and newer) or (self.before_duedate and record["timestamp"] != existing)):
                        self.log.info("%s: %s %s", "No newer submission to collect" if self.update else
                                      "Submission already exists, use --update to update", student, assignment)
                        break
                try:
                    self._collect(record, dest)
                except Refused as why:
                    self._refuse(record["filename"], str(why))
                    continue
                self.log.info("Collected submission: %s %s (%s)", student, assignment, record["claimed"])
                collected += 1
                break
        self.log.info("Collected %d submission(s) of '%s'; %d inbound folder(s) refused%s", collected, assignment,
                      len(self.refused),
                      f" (named above and in {os.path.join(self.coursedir.root, self.refusals_log)})"
                      if self.refused else "")

    def _collect(self, record, dest):
        """Copy one inbound folder to `dest` through a temporary folder beside it, or Refused."""
        try:
            top = os.open(record["filename"], FOLDER_FLAGS, dir_fd=self._inbound_fd())
        except OSError as exc:
            raise Refused(f"it could not be opened as a folder ({exc.strerror})") from None
        try:
            self._stage(top, record, dest)
        except PermissionError as exc:  # a part its maker made unreadable: this folder, not the collect
            raise Refused(f"part of it cannot be read by the instructor ({exc.strerror})") from None
        finally:
            os.close(top)

    def _stage(self, top, record, dest):
        parent = os.path.dirname(dest)
        made_parent = not os.path.isdir(parent)  # a student's first submission: their folder in submitted/
        os.makedirs(parent, exist_ok=True)
        staging = tempfile.mkdtemp(prefix=f".{os.path.basename(dest)}.collecting-", dir=parent)
        try:
            info = os.fstat(top)
            if (info.st_dev, info.st_ino, info.st_uid) != (record["device"], record["inode"], record["uid"]):
                raise Refused("it was replaced while collect read it")
            budget = {"entries": 0, "bytes": 0, "changed": info.st_ctime}
            self._copy_folder(top, staging, "", record, budget, depth=0)
            self._check_timestamp(staging, record)
            self._check_unchanged(budget["changed"], record)
            self._check_secret(staging)
            os.chmod(staging, 0o755)  # as nbgrader's copy leaves it (mkdtemp made it 0700)
            if os.path.isdir(dest):
                shutil.rmtree(dest)
            os.rename(staging, dest)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            if made_parent:
                os.rmdir(parent)  # refused: no trace of this student in submitted/
            raise

    def _inbound_fd(self):
        if getattr(self, "_inbound", None) is None:
            self._inbound = os.open(self.inbound_path, FOLDER_FLAGS)
        return self._inbound

    def _copy_folder(self, fd, target, relpath, record, budget, depth):
        if depth > self.max_depth:
            raise Refused(f"{relpath} lies deeper than {self.max_depth} folders")
        with os.scandir(fd) as entries:
            for entry in entries:
                rel = f"{relpath}/{entry.name}" if relpath else entry.name
                budget["entries"] += 1  # ignored ones too: the walk itself is bounded
                if budget["entries"] > self.max_entries:
                    raise Refused(f"it holds more than {self.max_entries} files and folders")
                if self._ignored(entry.name):
                    self.log.info("Not copied (CourseDirectory.ignore): %s %r", record["username"], rel)
                    continue
                info = entry.stat(follow_symlinks=False)
                budget["changed"] = max(budget["changed"], info.st_ctime)  # a change time no user can set
                if info.st_uid != record["uid"]:
                    raise Refused(f"{rel!r} belongs to {_user_name(info.st_uid)}, not to {record['username']}")
                if stat.S_ISDIR(info.st_mode):
                    inner = os.open(entry.name, FOLDER_FLAGS, dir_fd=fd)
                    try:
                        self._same(inner, info, rel)
                        os.mkdir(os.path.join(target, entry.name), 0o755)
                        self._copy_folder(inner, os.path.join(target, entry.name), rel, record, budget, depth + 1)
                    finally:
                        os.close(inner)
                elif stat.S_ISREG(info.st_mode):
                    if info.st_nlink > 1:  # its contents can be changed from elsewhere after the submission
                        raise Refused(f"{rel!r} is a hard link ({info.st_nlink} names); only files of its own "
                                      "are collected")
                    if not any(fnmatch.fnmatch(entry.name, glob) for glob in self.coursedir.include):
                        self.log.info("Not copied (not in CourseDirectory.include): %s %r", record["username"], rel)
                        continue
                    self._copy_file(fd, entry.name, os.path.join(target, entry.name), rel, info, budget)
                else:
                    raise Refused(f"{rel!r} is {kind_of(info.st_mode)}; only files and folders are collected")

    def _ignored(self, name):
        return any(fnmatch.fnmatch(name, glob) for glob in self.coursedir.ignore)

    @staticmethod
    def _same(fd, info, rel):
        now = os.fstat(fd)
        if (now.st_dev, now.st_ino) != (info.st_dev, info.st_ino):
            raise Refused(f"{rel!r} was replaced while collect read it")

    def _copy_file(self, parent, name, target, rel, info, budget):
        file_limit, folder_limit = 1000 * self.coursedir.max_file_size, 1000 * self.coursedir.max_dir_size
        try:
            fd = os.open(name, FILE_FLAGS, dir_fd=parent)
        except OSError as exc:  # ELOOP: it became a link after the listing
            raise Refused(f"{rel!r} could not be opened as a regular file ({exc.strerror})") from None
        try:
            self._same(fd, info, rel)
            # before reading (a sparse giant costs nothing) and while reading (the file may grow)
            self._within(rel, info.st_size, budget["bytes"] + info.st_size, file_limit, folder_limit)
            with os.fdopen(os.open(target, WRITE_FLAGS, 0o644), "wb") as out:
                size = 0
                while chunk := os.read(fd, CHUNK):
                    size += len(chunk)
                    budget["bytes"] += len(chunk)
                    self._within(rel, size, budget["bytes"], file_limit, folder_limit)
                    out.write(chunk)
        finally:
            os.close(fd)

    @staticmethod
    def _within(rel, size, total, file_limit, folder_limit):
        if size > file_limit:
            raise Refused(f"{rel!r} is larger than {file_limit} bytes (CourseDirectory.max_file_size)")
        if total > folder_limit:
            raise Refused(f"it holds more than {folder_limit} bytes (CourseDirectory.max_dir_size)")

    def _check_timestamp(self, staging, record):
        """The copy's timestamp.txt (what autograde reads for lateness) says the folder's vetted date."""
        path = os.path.join(staging, "timestamp.txt")
        try:
            with open(path, encoding="utf-8") as file:
                written = file.read().strip()
        except (FileNotFoundError, UnicodeDecodeError):
            written = None
        if written is None or written != record["claimed"]:
            raise Refused(f"its timestamp.txt ({written!r}) is not the date in its name ({record['claimed']!r})")

    def _check_unchanged(self, changed, record):
        """Nothing in the folder changed after its date (beyond the window of a submit): a file
        rewritten in place after the due date changes its own change time, not the folder's."""
        latest = _utc(changed)  # the same window as the folder's own making: a submit copies for a while
        if latest > record["timestamp"] + datetime.timedelta(seconds=self.clock_skew + self.submit_seconds):
            raise Refused(f"it is dated {record['timestamp']:%Y-%m-%d %H:%M:%S} UTC, but something in it changed "
                          f"at {latest:%Y-%m-%d %H:%M:%S} UTC: changed after it was submitted")

    @staticmethod
    def _check_secret(staging):
        """submission_secret.txt, when there, is what nbgrader's submit writes (hex digits): release_feedback
        reads it for every student and stops at the first it cannot use."""
        path = os.path.join(staging, "submission_secret.txt")
        try:
            with open(path, "rb") as file:
                secret = file.read(SECRET_MAX + 1)
        except FileNotFoundError:
            return
        if not (0 < len(secret) <= SECRET_MAX and all(c in b"0123456789abcdef" for c in secret)):
            raise Refused("its submission_secret.txt is not the hex secret nbgrader's submit writes")

    def start(self):
        try:
            return super().start()
        finally:
            if getattr(self, "_inbound", None) is not None:
                os.close(self._inbound)
                self._inbound = None


def _checked_exchange_folders(exchange, *paths):
    """Fail unless each existing path is a real folder of the user running the release."""
    for path in paths:
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            continue
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
            exchange.fail(f"{path} is {kind_of(info.st_mode)} of {_user_name(info.st_uid)}, not a folder of yours: "
                          f"someone made it before you; remove it (as root) and release again")


class HeroExchangeReleaseAssignment(ExchangeReleaseAssignment):
    """`nbgrader release_assignment` that writes only into exchange folders of its own, with a sticky inbound."""

    def init_dest(self):
        course = os.path.join(self.root, self.coursedir.course_id)
        _checked_exchange_folders(self, course, os.path.join(course, "outbound"), os.path.join(course, "inbound"))
        super().init_dest()
        # sticky: only a folder's maker (and the instructor) may rename or delete it
        os.chmod(self.inbound_path, os.stat(self.inbound_path).st_mode | stat.S_ISVTX)


class HeroExchangeReleaseFeedback(ExchangeReleaseFeedback):
    """`nbgrader release_feedback` that writes only into an exchange feedback folder of its own."""

    def init_dest(self):
        course = os.path.join(self.root, self.coursedir.course_id)
        _checked_exchange_folders(self, course, os.path.join(course, "feedback"))
        super().init_dest()

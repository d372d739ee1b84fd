"""nbgrader integration: grading out of process instead of in the student's kernel.

`HeroAutogradeConverter` takes the place of nbgrader's Autograde converter (the
course's nbgrader_config.py installs it).  Before nbgrader touches a
submission it screens `submitted/<student>/<assignment>`: a notebook that is not
a regular file, is too large, is not valid JSON, or that nbgrader itself could
not process (an old or new metadata schema, nesting deep enough to exhaust the
recursion limit) is reported and skipped, so one submission never stops the run
for the students after it.  A notebook over one of the grader's limits on its
shape (cells, JSON objects, JSON values: engine.parse_notebook) is refused there
from its bytes, before nbformat reads it, and nbgrader processes a stand-in for
it (StandIns): its answers score 0 and its exercises are graded, as through
every other front end.  It then copies the submission's other files without
following links (nbgrader's own copy follows them): a link, FIFO, device or
socket is left behind and named in that student's report.

`HeroAutograde` takes the place of nbgrader's `Execute` preprocessor during
`nbgrader autograde`.  No kernel is started and no notebook cell runs in the
nbgrader process: the submission folder (package and notebook) goes to the
sandboxed workers, the verdicts come back as data, and each grade cell gets
an output that nbgrader's own SaveAutoGrades turns into points: a stdout line
for a pass, an error for a failure.  The hidden-test sources are removed from
the autograded notebook, so `generate_feedback` cannot show them.
"""

import atexit
import datetime
import fcntl
import hashlib
import json
import os
import re
import struct
import sys
import time
from concurrent.futures import Future
from functools import lru_cache
from pathlib import Path
from shutil import rmtree
from types import SimpleNamespace

import jsonschema
import sqlalchemy

from nbconvert.preprocessors import ClearMetadataPreprocessor
from nbformat.v4 import new_output
import nbgrader as nbgrader_package
from nbgrader.converters import Autograde, BaseConverter, GenerateFeedback
from nbgrader.converters.base import NbGraderException
from nbgrader.api import MissingEntry
from nbgrader import utils as nbgrader_utils
from nbgrader.nbgraderformat import common as nbgrader_format
from nbgrader.preprocessors import (
    AssignLatePenalties, CheckCellMetadata, ClearOutput, DeduplicateIds, IgnorePattern, LimitOutput,
    NbGraderPreprocessor, OverwriteCells, OverwriteKernelspec, SaveAutoGrades,
)
from nbgrader.utils import is_ignored
from traitlets import Bool, Float, Integer, Unicode
from traitlets.config import Config

from . import engine, ledger, progress, registry, safefiles, sanitise
from .sandbox import WorkerPool

HIDDEN_TESTS = re.compile(r"^[ \t]*### BEGIN HIDDEN TESTS.*?^[ \t]*### END HIDDEN TESTS[ \t]*\n?", re.M | re.S)
HIDDEN_NOTE = "# （隐藏测试已由评分器在独立进程中运行 / hidden tests ran in the grader's own process）\n"
REPORT_NAME = "hero_report.json"

RESULTS_DIR = ".hero-results"  # in the course root: every result by key (autograder/ledger.py)

_pools = {}
MAX_COPY_BYTES = 20_000_000  # per file copied from submitted/ to autograded/
MAX_COPY_FILES = 10_000  # per walk of the copy (the package, then everything else)
# autograded folder -> what the safe copy left behind there, for that submission's report
_refused = {}
# autograded folder -> its report, graded with the whole class before nbgrader's loop records it
_pregraded = {}


def _pool(course_root, size=None):
    """One pool per nbgrader process: torch is imported once per worker, not per submission."""
    key = str(course_root)
    if key not in _pools:
        _pools[key] = WorkerPool(size=size or None, hidden=[course_root])
        atexit.register(_pools[key].close)
    return _pools[key]


def write_report(folder, data):
    """The report in `folder`, replacing any earlier one: nbgrader leaves an autograded folder's
    files read-only (0444), and a resubmission's report must still be written by a non-root grader."""
    path = Path(folder) / REPORT_NAME
    if path.is_symlink() or path.exists():
        path.unlink()
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")


def verdict_output(item):
    if item.status == "passed":
        return new_output("stream", name="stdout", text=f"✓ {item.id}: {item.feedback_zh}\n  ({item.feedback_en})\n")
    lines = [f"{item.feedback_zh}", f"({item.feedback_en})"]
    return new_output("error", ename=f"HeroCheck[{item.status}]", evalue=lines[0], traceback=lines)


class HeroAutograde(NbGraderPreprocessor):
    timeout = Float(engine.DEFAULT_TIMEOUT, help="seconds of CPU time allowed per exercise").tag(config=True)

    def preprocess(self, nb, resources):
        folder = Path(resources["metadata"]["path"]).resolve()
        course_root = folder.parents[2]  # <root>/autograded/<student>/<assignment>
        report = _pregraded.pop(str(folder), None)
        if report is None:
            report = engine.grade(folder, resources["nbgrader"]["assignment"], pool=_pool(course_root),
                                  timeout=self.timeout)
        report.problems[:0] = _refused.get(str(folder), [])
        # <student>/<assignment>: the report goes back to the student, the course root's path does not
        report.submission = str(folder.relative_to(folder.parents[1]))
        verdicts = {item.id: item for item in report.items}
        for cell in nb.cells:
            meta = cell.metadata.get("nbgrader", {})
            if cell.cell_type != "code" or not meta.get("grade"):
                continue
            item = verdicts.get(meta.get("grade_id"))
            cell.source = HIDDEN_TESTS.sub(HIDDEN_NOTE, cell.source)
            if item is None:
                self.log.warning("grade cell %s has no check in the registry", meta.get("grade_id"))
                cell.outputs = [new_output("error", ename="HeroCheck[unknown]", evalue="no such check", traceback=[])]
            else:
                cell.outputs = [verdict_output(item)]
        write_report(folder, report.to_json())
        self.log.info("%s: %s/%s (isolation: %s, devices: %s)", folder, report.score, report.max_score,
                      report.isolation, ", ".join(report.devices))
        return nb, resources



class ReleasedCellsOverwrite(OverwriteCells):
    """nbgrader's OverwriteCells, reporting only real changes.  The release removes the hidden
    tests from grade cells, so every such cell of every submission differs from its gradebook
    source and nbgrader logs "Attribute 'checksum' ... has changed!" for each: 14 lines per
    submission that drown the one warning that matters.  A locked cell exactly as released is
    restored silently; one the student edited is still reported (and restored) by nbgrader."""

    def preprocess(self, nb, resources):
        self._released = None  # grade id -> the cell as released, read with the notebook's first cell
        return super().preprocess(nb, resources)

    def preprocess_cell(self, cell, resources, cell_index):
        if self._released is None:  # one query for the notebook, not one more per cell
            try:
                cells = self.gradebook.find_notebook(self.notebook_id, self.assignment_id).source_cells
            except MissingEntry:
                cells = []
            self._released = {c.name: HIDDEN_TESTS.sub("", c.source).rstrip() for c in cells}
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        self._as_released = grade_id in self._released and cell.source.rstrip() == self._released[grade_id]
        return super().preprocess_cell(cell, resources, cell_index)

    def report_change(self, name, attr, old, new):
        if attr == "checksum" and self._as_released:
            self.log.debug("cell %s is as released (its hidden tests restored)", name)
            return
        super().report_change(name, attr, old, new)


TEMPLATES = Path(__file__).resolve().parent / "templates"
NBGRADER_TEMPLATES = Path(nbgrader_package.__file__).resolve().parent / "server_extensions" / "formgrader" / "templates"


def formgrader_exporter_config(c):
    """formgrader's own HTMLExporter (it reads this course's nbgrader config): every notebook it
    shows is cleaned again as it is rendered (autograder/sanitise.py), into this course's copy of
    its submission page (autograder/templates/hero_formgrade/: a Content-Security-Policy with a
    nonce).  HeroGenerateFeedback sets its own page over this one."""
    c.HTMLExporter.preprocessors = import_paths([sanitise.SanitiseStudentHTML])
    c.HTMLExporter.template_name = "hero_formgrade"
    c.HTMLExporter.extra_template_basedirs = [str(TEMPLATES), str(NBGRADER_TEMPLATES)]
    # where `{% extends 'formgrade/index.html.j2' %}` finds nbgrader's page
    c.HTMLExporter.extra_template_paths = [str(NBGRADER_TEMPLATES)]


class HeroGenerateFeedback(GenerateFeedback):
    """nbgrader's GenerateFeedback with this course's page (autograder/templates/hero_feedback/,
    which extends nbgrader's): set here, for feedback only, because formgrader renders its own
    views with the same HTMLExporter class."""

    def __init__(self, coursedir=None, **kwargs):
        super().__init__(coursedir=coursedir, **kwargs)
        config = Config()
        config.HTMLExporter.template_name = "hero_feedback"
        config.HTMLExporter.extra_template_basedirs = [str(TEMPLATES), str(NBGRADER_TEMPLATES)]
        # where `{% extends 'feedback/index.html.j2' %}` finds nbgrader's page, next to its bootstrap css
        config.HTMLExporter.extra_template_paths = list(self.config.HTMLExporter.extra_template_paths) + \
            [str(NBGRADER_TEMPLATES)]
        self.update_config(config)

    # nbgrader's page header loads MathJax from a CDN; its math is MathML here, so the tag goes
    _MATHJAX = re.compile(r"<!-- Load mathjax -->.*?<!-- End of mathjax configuration -->", re.S)
    _CSP = f'<meta http-equiv="Content-Security-Policy" content="{sanitise.FEEDBACK_CSP}">'

    def write_single_notebook(self, output, resources):
        output = self._MATHJAX.sub("", output)
        # the policy first in <head>, before anything it governs: the page runs no script at all
        head = re.search(r"<head[^>]*>", output)
        output = output[:head.end()] + "\n" + self._CSP + output[head.end():] if head else self._CSP + output
        return super().write_single_notebook(output, resources)


def import_paths(classes):
    """Classes as import strings: nbconvert imports them, and the configuration stays plain data
    (formgrader shows it as JSON, and warns when it cannot)."""
    return [f"{cls.__module__}.{cls.__qualname__}" for cls in classes]


SANITIZE_PREPROCESSORS = import_paths(
    [ClearOutput, DeduplicateIds, OverwriteKernelspec, ReleasedCellsOverwrite, CheckCellMetadata])

# nbgrader's own pipeline with Execute replaced: scores, late penalties and metadata checks stay nbgrader's
# ...and, last, the autograded notebook (what formgrader and generate_feedback render) cleaned of
# every student-written script, handler, frame, form and fetch (autograder/sanitise.py)
AUTOGRADE_PREPROCESSORS = import_paths([
    HeroAutograde, IgnorePattern, ClearMetadataPreprocessor, LimitOutput, SaveAutoGrades, AssignLatePenalties,
    CheckCellMetadata, sanitise.SanitiseStudentHTML,
])

# generate_feedback: nbgrader's own steps, then the same cleaning with math as MathML (drawn with
# no script); it runs after GetGrades, so the instructor's comments are cleaned too
FEEDBACK_PREPROCESSORS = import_paths(list(GenerateFeedback.class_traits()["preprocessors"].default())
                                      + [sanitise.SanitiseStudentHTMLToMathML])


def screen(submission, notebooks):
    """(why nbgrader must not process this submission folder, or None when it may; {notebook path:
    why nbgrader processes a stand-in for it}).

    A notebook over one of the grader's limits on its shape (engine.parse_notebook: its cells, JSON
    objects and values) is refused here, from its bytes, before nbformat reads it: reading it is what
    cost nbgrader minutes and gigabytes (800,000 empty cells: 7 min, 4.4 GB).  Such a submission is
    not skipped: nbgrader processes a stand-in for the notebook (StandIns), and the grader refuses
    the notebook itself as every front end does, so its answers score 0 and its exercises are graded."""
    import nbformat
    from nbgrader.nbgraderformat import MetadataValidator

    stand_ins = {}
    try:
        folder = safefiles.Folder(submission)
    except OSError as exc:
        return f"the folder cannot be opened ({exc.strerror})", stand_ins
    with folder:
        for path in notebooks:
            name = os.path.relpath(path, submission)
            try:
                # only the file's own cap: the content limit is the grader's (engine.check_notebook_size),
                # which costs the answers and names why, the same way through every front end
                data = folder.read(name, engine.MAX_NOTEBOOK_FILE_BYTES)
                try:
                    engine.parse_notebook(name, data)  # its shape: bounded before nbformat reads it
                except safefiles.Refused as exc:
                    stand_ins[path] = engine.printable(str(exc))
                    continue
                except (ValueError, RecursionError):  # not JSON: nbformat's reading names why, below
                    pass
                notebook = nbformat.reads(data.decode("utf-8"), as_version=4)
                MetadataValidator().validate_nb(notebook)
            except safefiles.Refused as exc:
                return str(exc), stand_ins
            except RecursionError:
                return f"{name} is nested too deeply to be read", stand_ins
            except Exception as exc:  # bad JSON or UTF-8, an nbformat or nbgrader schema error
                return f"{name} cannot be processed by nbgrader: {type(exc).__name__}: {str(exc)[:300]}", stand_ins
    return None, stand_ins


STAND_IN_NOTE = (
    "**评分器没有读取这个笔记本**：{reason}。作答题 (answers) 记 0 分；`{package}/` 中的练习 (exercises) 照常评分。"
    "下面是本笔记本的评分单元格 (grade cells) 及其结果。\n\n"
    "(**The grader did not read this notebook**: {reason}. Its answers score 0; the exercises in `{package}/` "
    "were graded as usual. Below are the notebook's grade cells and their results.)")


def stand_in(db_url, course_id, assignment_id, notebook_id, reason):
    """The notebook nbgrader processes in place of one the grader refused for its shape: a note that
    says why, then the notebook's grade cells as released (the gradebook's, in its order), so that
    nbgrader records every grade: the exercises' as graded, the answers' as refused."""
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook
    from nbgrader.api import Gradebook

    cells = [new_markdown_cell(STAND_IN_NOTE.format(reason=reason, package=registry.PACKAGE))]
    with Gradebook(db_url, course_id) as gradebook:
        notebook = gradebook.find_notebook(notebook_id, assignment_id)
        graded = {cell.name: cell for cell in notebook.grade_cells}
        solutions = {cell.name for cell in notebook.solution_cells}
        for source in notebook.source_cells:
            if source.name not in graded:
                continue
            meta = {"grade": True, "grade_id": source.name, "locked": source.locked, "checksum": source.checksum,
                    "cell_type": source.cell_type, "points": graded[source.name].max_score,
                    "solution": source.name in solutions, "task": False, "schema_version": 3}
            metadata = {"deletable": False, "nbgrader": meta, **({} if meta["solution"] else {"editable": False})}
            new = new_code_cell if source.cell_type == "code" else new_markdown_cell
            cells.append(new(source.source, metadata=metadata))
    return new_notebook(cells=cells, metadata={"language_info": {"name": "python"}})


def _files_to_copy(folder):
    """The submission's files to copy: the package's first, in a walk of its own, then the rest.
    Each walk has its own limits, so no other folder, however large, keeps the package from being
    copied; a limit that stops either walk is named among the refused entries."""
    package, refused = folder.files(registry.PACKAGE, "", max_files=MAX_COPY_FILES)
    others, more = folder.files("", "", max_files=MAX_COPY_FILES, enter=lambda relpath: relpath != registry.PACKAGE)
    return package + others, refused + more


class SafeCopy(BaseConverter):
    """nbgrader's copy of a submission's non-notebook files, without following links.

    It sits between Autograde and BaseConverter in the method resolution order, so that
    Autograde's own `super().init_assignment` lands here."""

    def init_assignment(self, assignment_id, student_id):
        source = self._format_source(assignment_id, student_id)
        dest = self._format_dest(assignment_id, student_id)
        refused = []
        with safefiles.Folder(source) as folder:
            found, refused = _files_to_copy(folder)
            for relpath in found:
                if relpath.endswith(".ipynb") or is_ignored(os.path.join(source, relpath), self.coursedir.ignore):
                    continue
                if relpath.split("/")[0] == REPORT_NAME:  # only the grader writes it (a folder of that name too)
                    refused.append(f"{relpath}: the grader's own file name; not copied")
                    continue
                try:
                    data = folder.read(relpath, MAX_COPY_BYTES)
                except safefiles.Refused as exc:
                    refused.append(str(exc))
                    continue
                path = os.path.join(dest, relpath)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                if os.path.lexists(path):
                    os.remove(path)
                with open(path, "wb") as out:
                    out.write(data)
        refused = [engine.printable(problem) for problem in refused]  # file names are the student's
        for problem in refused:
            self.log.warning("%s/%s: %s", student_id, assignment_id, problem)
        _refused[str(Path(dest).resolve())] = refused


class StandIns(BaseConverter):
    """nbgrader's conversion of a notebook, except one the screen refused for its shape: nbgrader never
    reads it.  Its sanitising pass converts a stand-in instead (`stand_in`: a note and the grade cells
    as released), and the autograded folder then holds the submitted file itself until the grader has
    graded it, so the grader refuses it as every front end does (engine.parse_notebook, the same
    verdict as `hero grade`); the autograde pass converts the stand-in again, with its verdicts, into
    the notebook nbgrader keeps.  It sits below Autograde in the method resolution order, so that
    Autograde's own `super().convert_single_notebook` (its serial path) lands here too."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._stand_ins = {}  # submitted notebook -> why the screen refused it
        self._stand_ins_built = {}  # autograded notebook -> the stand-in its sanitising pass wrote

    def convert_single_notebook(self, notebook_filename):
        reason, built = self._stand_ins.get(notebook_filename), self._stand_ins_built.pop(notebook_filename, None)
        if reason is None and built is None:
            return super().convert_single_notebook(notebook_filename)
        self.log.info("Converting a stand-in for %s (nbgrader does not read it)", notebook_filename)
        resources = self.init_single_notebook_resources(notebook_filename)
        # what nbconvert's from_filename records of the file (HeroAutograde grades the folder in `path`)
        path, name = os.path.split(notebook_filename)
        modified = datetime.datetime.fromtimestamp(os.lstat(notebook_filename).st_mtime, tz=datetime.timezone.utc)
        resources["metadata"] = {"name": os.path.splitext(name)[0], "path": path,
                                 "modified_date": modified.strftime("%B %-d, %Y")}
        if built is None:
            ids = resources["nbgrader"]
            notebook = stand_in(self.coursedir.db_url, self.coursedir.course_id, ids["assignment"], ids["notebook"],
                                reason)
        else:
            import nbformat

            notebook = nbformat.reads(built, as_version=4)
        output, resources = self.exporter.from_notebook_node(notebook, resources=resources)
        self.write_single_notebook(output, resources)
        if built is None:
            written = os.path.join(self.writer.build_directory, name)
            self._stand_ins_built[written] = output
            with safefiles.Folder(path) as folder:  # the file as submitted, for the grader to refuse
                data = folder.read(name, engine.MAX_NOTEBOOK_FILE_BYTES)
            os.remove(written)
            with open(written, "wb") as out:
                out.write(data)


_RECORDED = sqlalchemy.Table(
    "hero_recorded", sqlalchemy.MetaData(),
    sqlalchemy.Column("student_id", sqlalchemy.String(128), primary_key=True),
    sqlalchemy.Column("assignment_id", sqlalchemy.String(128), primary_key=True),
    sqlalchemy.Column("result_key", sqlalchemy.String(64), nullable=False),
)
_TABLE_LOCK = 0x6865726F5F746162  # PostgreSQL advisory lock around creating the table ("hero_tab")


class RecordedIn:
    """Which submissions' grades a gradebook holds, and graded under which result key: a table
    of its own (`hero_recorded`) in the gradebook's database, beside nbgrader's.  A row counts
    only while nbgrader's own row for that submission exists too, so a new, emptied or switched
    gradebook (another SQLite file, PostgreSQL) has nothing recorded and gets every submission."""

    def __init__(self, db_url):
        self.engine = sqlalchemy.create_engine(db_url)
        with self.engine.begin() as db:
            if self.engine.dialect.name == "postgresql":  # two runs creating the table at once
                db.execute(sqlalchemy.text("SELECT pg_advisory_xact_lock(:key)"), {"key": _TABLE_LOCK})
            _RECORDED.metadata.create_all(db)

    def keys(self):
        """{(student, assignment): result key} of every submission recorded here."""
        query = sqlalchemy.text(
            "SELECT r.student_id, r.assignment_id, r.result_key FROM hero_recorded r "
            "JOIN assignment a ON a.name = r.assignment_id "
            "JOIN submitted_assignment s ON s.assignment_id = a.id AND s.student_id = r.student_id")
        with self.engine.connect() as db:
            return {(student, assignment): key for student, assignment, key in db.execute(query)}

    def mark(self, student_id, assignment_id, result_key):
        dialect = self.engine.dialect.name
        if dialect == "postgresql":
            from sqlalchemy.dialects.postgresql import insert
        elif dialect == "sqlite":
            from sqlalchemy.dialects.sqlite import insert
        else:
            insert = None
        row = {"student_id": student_id, "assignment_id": assignment_id, "result_key": result_key}
        with self.engine.begin() as db:
            if insert is None:  # another database: replace the row in one transaction
                db.execute(_RECORDED.delete().where(_RECORDED.c.student_id == student_id,
                                                    _RECORDED.c.assignment_id == assignment_id))
                db.execute(_RECORDED.insert().values(**row))
            else:  # two graders of one student (two course roots) may mark it at once
                db.execute(insert(_RECORDED).values(**row).on_conflict_do_update(
                    index_elements=["student_id", "assignment_id"], set_={"result_key": result_key}))

    def close(self):
        self.engine.dispose()


class RunLock:
    """One autograde at a time per submission and gradebook: a run locks every submission it
    chose (its folder in this course root) before it writes anything, and refuses to start when
    another run holds one of them.  The locks live in an open file or a database session of
    this process alone (never inherited: its children start with close_fds): its end, a crash or
    a SIGKILL included, releases them, so a run started after a crash proceeds.

    SQLite: byte-range locks (fcntl, open file description locks) on one file beside the
    gradebook, one byte per submission (one descriptor for any class size).  PostgreSQL: session
    advisory locks on one connection held for the run.  Several course roots (or several
    `--student` runs) may still write one gradebook at once, each on its own submissions
    (docs/grading.md, "Gradebook database")."""

    def __init__(self, db_url):
        self.url = sqlalchemy.engine.make_url(db_url)
        self.dialect = self.url.get_backend_name()
        self._file = self._connection = None
        if self.dialect == "sqlite" and self.url.database not in (None, "", ":memory:"):
            self._file = open(f"{self.url.database}.autograde-lock", "a+b")
        elif self.dialect == "postgresql":
            self._engine = sqlalchemy.create_engine(self.url, poolclass=sqlalchemy.pool.NullPool)
            self._connection = self._engine.connect().execution_options(isolation_level="AUTOCOMMIT")

    @property
    def supported(self):
        return self._file is not None or self._connection is not None

    def _byte_lock(self, kind, offset):
        """An open file description lock (F_OFD_SETLK) on one byte: unlike a POSIX lockf, it
        belongs to this open file, so another RunLock of this same process is refused too, and
        no other open/close of the file in this process drops it."""
        # struct flock: l_type, l_whence, l_start, l_len, l_pid (0 for these locks)
        fcntl.fcntl(self._file, fcntl.F_OFD_SETLK, struct.pack("hhqqi4x", kind, os.SEEK_SET, offset, 1, 0))

    @staticmethod
    def _key(submission):
        # 62 bits: a byte offset for fcntl and a PostgreSQL bigint, both positive
        return int.from_bytes(hashlib.sha256(str(Path(submission).resolve()).encode()).digest()[:8], "big") >> 2

    def acquire(self, submissions):
        """Lock them all and return [], or lock none and return those another run holds."""
        keys = {self._key(submission): submission for submission in submissions}
        if self._file is not None:
            held, busy = [], []
            for key, submission in sorted(keys.items()):
                try:
                    self._byte_lock(fcntl.F_WRLCK, key)
                    held.append(key)
                except OSError:
                    busy.append(submission)
            if busy:
                for key in held:
                    self._byte_lock(fcntl.F_UNLCK, key)
            return busy
        if self._connection is not None:
            taken = [key for (key,) in self._connection.execute(
                sqlalchemy.text("SELECT k FROM unnest(CAST(:keys AS bigint[])) AS k WHERE pg_try_advisory_lock(k)"),
                {"keys": sorted(keys)})]
            busy = [submission for key, submission in sorted(keys.items()) if key not in set(taken)]
            if busy:
                self._connection.execute(
                    sqlalchemy.text("SELECT pg_advisory_unlock(k) FROM unnest(CAST(:keys AS bigint[])) AS k"),
                    {"keys": taken})
            return busy
        return []

    def close(self):
        if self._file is not None:
            self._file.close()  # releases every byte-range lock of this process on it
        if self._connection is not None:
            try:  # at once: the server ends a closed session's locks only when its backend exits
                self._connection.execute(sqlalchemy.text("SELECT pg_advisory_unlock_all()"))
            finally:
                self._connection.close()  # the session ends (after a crash: its advisory locks with it)
                self._engine.dispose()
        self._file = self._connection = None


class HeroAutogradeConverter(Autograde, SafeCopy, StandIns):
    """nbgrader's Autograde with the screening, the safe copy and the stand-ins described above,
    grading a whole class at once and resumably (docs/grading.md, "A whole class at once").

    nbgrader's own loop runs as always (its checks, its gradebook writes, its error handling), in
    three stages over every submission it chose: it prepares each one (the gradebook's student
    and submission, the safe copy, the sanitising pass); then every prepared submission is graded
    at once, in one pool of sandboxed workers or on a Ray cluster; then nbgrader's autograde pass
    records each one's grades.  Each result is also kept by its key (submission, assignment,
    grader: autograder/ledger.py) and a submission is marked recorded, in the gradebook itself
    (RecordedIn), only once its grades are there, so a run killed at any point and started again
    grades only what has no result yet and records whatever this gradebook does not hold.  A run
    locks the submissions it chose (RunLock): a second run on any of them refuses to start."""

    skipped = {}  # submission folder -> reason, for the caller
    _stage, _built = None, []  # convert_notebooks' stage, and the notebooks prepared for a submission
    jobs = Integer(0, help="Sandboxed grading workers (0: the pool's default, up to 2 on one machine)").tag(config=True)
    ray_address = Unicode("", help="A Ray cluster's HOST:PORT to grade on (empty: grade here, no Ray)").tag(config=True)
    parallel = Bool(True, help="Grade every chosen submission at once; False: one at a time inside nbgrader's "
                               "loop, as before (the results are the same)").tag(config=True)
    reuse_results = Bool(True, help="Reuse a result kept for the same submission, assignment and grader "
                                    "(False: grade everything again)").tag(config=True)

    def init_notebooks(self):
        super().init_notebooks()
        self._lock_and_read_gradebook()
        for submission in sorted(self.assignments):
            reason, stand_ins = screen(submission, self.assignments[submission])
            if reason is None:
                for refused in stand_ins.values():
                    self.log.warning("%s: %s. nbgrader processes a stand-in for it (its grade cells as released): "
                                     "its answers score 0, the exercises are graded.",
                                     "/".join(Path(submission).parts[-2:]), refused)
                self._stand_ins.update(stand_ins)
                continue
            reason = engine.printable(reason)
            del self.assignments[submission]
            self.skipped[submission] = reason
            self.log.error("Skipped %s: %s. Every other submission is graded as usual.", submission, reason)
            student_id, assignment_id = Path(submission).parts[-2:]
            dest = Path(self._format_dest(assignment_id, student_id))
            try:
                dest.mkdir(parents=True, exist_ok=True)
                write_report(dest, {"submission": f"{student_id}/{assignment_id}", "skipped": True, "score": 0,
                                    "problems": [reason]})
            except OSError as exc:  # the student's report is lost, never the class run
                self.log.error("Could not write the report of skipped %s: %s", submission, exc)

    def start(self):
        try:
            super().start()
        finally:
            for held in (self._lock, self._book):
                if held is not None:
                    held.close()
            self._lock = self._book = None

    _lock = _book = None

    def _lock_and_read_gradebook(self):
        """Before anything is written: lock the chosen submissions against another run, and read
        which of them this gradebook already holds."""
        self._lock = RunLock(self.coursedir.db_url)
        if not self._lock.supported:
            self.log.warning("%s: no lock against a second autograde run for this database; run one at a time",
                             self._lock.dialect)
        busy = self._lock.acquire(sorted(self.assignments))
        if busy:
            names = ", ".join("/".join(Path(submission).parts[-2:]) for submission in busy[:5])
            message = (f"another autograde run is grading {len(busy)} of these submissions into this gradebook "
                       f"({names}{', ...' if len(busy) > 5 else ''}): this run grades nothing. Let that run "
                       f"finish or stop it, then start this one again (a run that crashed holds nothing).")
            self.log.error(message)
            raise NbGraderException(message)
        self._book = RecordedIn(self.coursedir.db_url)
        self._in_gradebook = self._book.keys()
        self._keys = {}

    # --- which submissions: nbgrader's rule, and those an earlier run left unrecorded ---

    def _submitted(self, assignment_id, student_id):
        return self.coursedir.format_path(self.coursedir.submitted_directory, student_id, assignment_id)

    def _result_key(self, assignment_id, student_id):
        if (student_id, assignment_id) not in self._keys:  # hashing the submission once a run
            source = self.coursedir.format_path(self.coursedir.source_directory, ".", assignment_id)
            self._keys[student_id, assignment_id] = ledger.key(
                self._submitted(assignment_id, student_id), assignment_id, Path(source).glob("*.ipynb"))
        return self._keys[student_id, assignment_id]

    def init_destination(self, assignment_id, student_id):
        if super().init_destination(assignment_id, student_id):
            return True
        dest = Path(self._format_dest(assignment_id, student_id))
        excluded = student_id in (self.coursedir.student_id_exclude or "").split(",")
        if excluded or not dest.is_dir():
            return False
        recorded = self._recorded(assignment_id, student_id)
        if recorded is True:
            return False
        kept = self._stage == "prepare" and self.reuse_results and \
            self._ledger.get(self._result_key(assignment_id, student_id)) is not None
        self.log.warning("%s/%s: %s; %s", student_id, assignment_id,
                         "this gradebook does not hold its grades (an earlier run stopped before recording "
                         "them, or the gradebook is new)" if recorded is None
                         else "the submission, the assignment or the grader changed since its grades were recorded",
                         "its kept result is recorded now (not graded again)" if kept else "it is graded now")
        rmtree(dest)
        return True

    def _recorded(self, assignment_id, student_id):
        """True: this gradebook holds its grades under the current key; False: under another;
        None: not at all."""
        recorded = self._in_gradebook.get((student_id, assignment_id))
        return None if recorded is None else recorded == self._result_key(assignment_id, student_id)

    # --- stage 1 (nbgrader's loop): prepare; the autograde pass waits for stage 2 ---

    def convert_notebooks(self):
        graders = [p if isinstance(p, str) else f"{p.__module__}.{p.__qualname__}" for p in self.autograde_preprocessors]
        if not self.parallel or import_paths([HeroAutograde])[0] not in graders:  # nbgrader's loop, as it is
            return super().convert_notebooks()
        started = time.monotonic()
        self._stage, self._prepared, self._grading = "prepare", [], None
        self._counts = {"graded": 0, "reused": 0, "incomplete": 0}
        self._ledger = ledger.Ledger(Path(self.coursedir.root) / RESULTS_DIR)
        self._timeout = HeroAutograde(config=self.config).timeout
        found = [Path(submission).parts[-2:] for submission in self.assignments]  # (student, assignment)
        todo = len(found) if self.force else sum(self._recorded(a, s) is not True for s, a in found)
        # one bar over the class: each submission to do is prepared, graded and recorded
        self._bar = progress.bar(3 * todo, "autograde", unit="step")
        failure = None
        try:
            with self._bar:
                try:
                    super().convert_notebooks()
                except NbGraderException as exc:  # those submissions are named in the log; the others go on
                    failure = exc
                self._stage = "record"
                errors = self._record_prepared()
        finally:
            self._stage = None
            if self._grading is not None:
                self._grading.close(cancel=True)
        counts = self._counts
        print(f"autograde: {len(found)} submission(s) found, {len(self._prepared)} prepared in "
              f"{progress.duration(time.monotonic() - started)}: {counts['graded']} graded now, "
              f"{counts['reused']} from earlier results, {len(errors)} failed to record, "
              f"{counts['incomplete']} incomplete (the grader's own failure: run again), "
              f"{len(self.skipped)} skipped", file=sys.stderr)
        if failure is not None:
            raise failure
        if errors:
            raise NbGraderException("could not record " + ", ".join(f"{s}/{a}" for a, s in errors))

    def init_assignment(self, assignment_id, student_id):
        super().init_assignment(assignment_id, student_id)
        self._built = []

    def convert_single_notebook(self, notebook_filename):
        if self._stage != "prepare":
            return super().convert_single_notebook(notebook_filename)
        self.log.info("Sanitizing %s", notebook_filename)
        self._sanitizing = True
        self._init_preprocessors()
        StandIns.convert_single_notebook(self, notebook_filename)
        self._built.append(os.path.join(self.writer.build_directory, os.path.basename(notebook_filename)))

    def set_permissions(self, assignment_id, student_id):
        if self._stage == "prepare":  # the last step of a submission prepared without error
            # nbgrader's read-only modes wait for stage 3, which writes the notebook again
            self._prepared.append((assignment_id, student_id, self._built, self._start_grading(assignment_id, student_id)))
            self._bar.update(1)
            return
        super().set_permissions(assignment_id, student_id)
        # the last step of a submission recorded: its grades are in the gradebook
        dest = Path(self._format_dest(assignment_id, student_id))
        try:
            report = json.loads((dest / REPORT_NAME).read_text(encoding="utf-8"))
        except FileNotFoundError:  # graded by another preprocessor (nbgrader's own Execute, say)
            return
        if report.get("complete", True):
            result_key = self._result_key(assignment_id, student_id)
            self._book.mark(student_id, assignment_id, result_key)
            self._in_gradebook[student_id, assignment_id] = result_key

    def run_post_convert_hook(self):
        if self._stage != "prepare":  # after the grades are recorded, where nbgrader runs it
            super().run_post_convert_hook()

    # --- stage 2: each prepared submission is graded while the next ones are prepared ---

    def _start_grading(self, assignment_id, student_id):
        """A future of the submission's report: a result kept under its key, or its grading,
        which starts now in the class's one pool (or on Ray) and is kept once complete."""
        dest = Path(self._format_dest(assignment_id, student_id)).resolve()
        result_key = self._result_key(assignment_id, student_id)
        kept = self._ledger.get(result_key) if self.reuse_results else None
        if kept is not None:
            self._counts["reused"] += 1
            self._bar.update(1)
            future = Future()
            future.set_result(engine.Report.from_json(kept))
            return future
        if self._grading is None:
            self._grading = self._grader()
        future = self._grading.submit(dest, assignment_id, self._timeout)
        future.add_done_callback(lambda graded: self._keep(result_key, graded))
        future.graded_now = True
        return future

    def _keep(self, result_key, graded):
        # in the grading thread, as soon as the report exists: a run killed later reuses it
        if not graded.cancelled() and graded.exception() is None and graded.result().complete:
            self._ledger.put(result_key, graded.result().to_json())

    def _grader(self):
        if self.ray_address:
            from . import class_ray

            return class_ray.Grading(self.ray_address, progress=self._bar)
        return engine.Grading(_pool(Path(self.coursedir.root).resolve(), self.jobs), progress=self._bar)

    # --- stage 3: nbgrader's autograde pass records each one's grades, in the order prepared ---

    def _record_prepared(self):
        errors = []
        for assignment_id, student_id, built, graded in self._prepared:
            dest = Path(self._format_dest(assignment_id, student_id))
            try:
                report = _pregraded[str(dest.resolve())] = graded.result()
                if getattr(graded, "graded_now", False):
                    self._counts["graded"] += 1
                    self._counts["incomplete"] += not report.complete
                self._bar.set_description("autograde: recording")
                self._sanitizing = False
                self._init_preprocessors()
                for notebook in built:
                    self.log.info("Autograding %s", notebook)
                    with nbgrader_utils.setenv(NBGRADER_EXECUTION="autograde"):
                        StandIns.convert_single_notebook(self, notebook)
                self._sanitizing = True
                self.set_permissions(assignment_id, student_id)
                self.run_post_convert_hook()
            except Exception:
                self.log.exception("There was an error recording %s/%s", student_id, assignment_id)
                errors.append((assignment_id, student_id))
                rmtree(dest, ignore_errors=True)
            finally:
                self._sanitizing = True
                _pregraded.pop(str(dest.resolve()), None)
            self._bar.update(1)
        return errors


@lru_cache(maxsize=None)
def _metadata_validator(schema_text):
    schema = json.loads(schema_text)
    validator = jsonschema.validators.validator_for(schema)
    validator.check_schema(schema)
    return validator(schema)


def _validate_cell_metadata(instance, schema):
    """jsonschema.validate, with the schema checked once and its validator kept.  nbgrader checks
    every cell's metadata with jsonschema.validate, which first checks the schema itself against
    its metaschema: that repeated check was 40% of nbgrader's own work per submission in the
    class's autograde (profiled; docs/benchmarks.md).  nbgrader's schema is one file that no run
    changes, so each cell is still checked exactly as before, against the same schema."""
    error = jsonschema.exceptions.best_match(_metadata_validator(json.dumps(schema, sort_keys=True))
                                             .iter_errors(instance))
    if error is not None:
        raise error


def _sandboxed_files_policy(handler):
    # what jupyter_server's own /files/ handler does: a student's .html or .svg opens in a unique
    # origin with no script, so it cannot use the instructor's session
    return handler.settings.get("headers", {}).get("Content-Security-Policy", "frame-ancestors 'self'") + \
        "; sandbox; default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'"


def install():
    """Make `nbgrader autograde` use HeroAutogradeConverter (called from nbgrader_config.py).
    In the Jupyter server (formgrader loads this configuration there) the files of a submission
    that formgrader serves get a sandboxing Content-Security-Policy."""
    import sys

    import nbgrader.apps.autogradeapp as app
    import nbgrader.apps.generatefeedbackapp as feedback_app

    app.Autograde = HeroAutogradeConverter
    nbgrader_format.jsonschema = SimpleNamespace(validate=_validate_cell_metadata)
    feedback_app.GenerateFeedback = HeroGenerateFeedback
    handlers = sys.modules.get("nbgrader.server_extensions.formgrader.handlers")
    if handlers is not None and not hasattr(handlers.SubmissionFilesHandler, "_hero_policy"):
        handlers.SubmissionFilesHandler._hero_policy = True
        handlers.SubmissionFilesHandler.content_security_policy = property(_sandboxed_files_policy)

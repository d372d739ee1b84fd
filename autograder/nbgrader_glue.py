"""nbgrader integration: grading out of process instead of in the student's kernel.

`HeroAutogradeConverter` takes the place of nbgrader's Autograde converter (the
course's nbgrader_config.py installs it).  Before nbgrader touches a
submission it screens `submitted/<student>/<assignment>`: a notebook that is not
a regular file, is too large, is not valid JSON, or that nbgrader itself could
not process (an old or new metadata schema, nesting deep enough to exhaust the
recursion limit) is reported and skipped, so one submission never stops the run
for the students after it.  It then copies the submission's other files without
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
import json
import os
import re
from pathlib import Path

from nbconvert.preprocessors import ClearMetadataPreprocessor
from nbformat.v4 import new_output
import nbgrader as nbgrader_package
from nbgrader.converters import Autograde, BaseConverter, GenerateFeedback
from nbgrader.api import MissingEntry
from nbgrader.preprocessors import (
    AssignLatePenalties, CheckCellMetadata, ClearOutput, DeduplicateIds, IgnorePattern, LimitOutput,
    NbGraderPreprocessor, OverwriteCells, OverwriteKernelspec, SaveAutoGrades,
)
from nbgrader.utils import is_ignored
from traitlets import Float
from traitlets.config import Config

from . import engine, safefiles, sanitise
from .sandbox import WorkerPool

HIDDEN_TESTS = re.compile(r"^[ \t]*### BEGIN HIDDEN TESTS\n.*?^[ \t]*### END HIDDEN TESTS\n?", re.S | re.M)
HIDDEN_NOTE = "# （隐藏测试已由评分器在独立进程中运行 / hidden tests ran in the grader's own process）\n"
REPORT_NAME = "hero_report.json"

_pools = {}
MAX_COPY_BYTES = 20_000_000  # per file copied from submitted/ to autograded/
# autograded folder -> what the safe copy left behind there, for that submission's report
_refused = {}


def _pool(course_root):
    """One pool per nbgrader process: torch is imported once per worker, not per submission."""
    key = str(course_root)
    if key not in _pools:
        _pools[key] = WorkerPool(hidden=[course_root])
        atexit.register(_pools[key].close)
    return _pools[key]


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
        (folder / REPORT_NAME).write_text(json.dumps(report.to_json(), ensure_ascii=False, indent=1), encoding="utf-8")
        self.log.info("%s: %s/%s (isolation: %s, devices: %s)", folder, report.score, report.max_score,
                      report.isolation, ", ".join(report.devices))
        return nb, resources


_HIDDEN_TESTS = re.compile(r"^[ \t]*### BEGIN HIDDEN TESTS.*?^[ \t]*### END HIDDEN TESTS[ \t]*\n?", re.M | re.S)


class ReleasedCellsOverwrite(OverwriteCells):
    """nbgrader's OverwriteCells, reporting only real changes.  The release removes the hidden
    tests from grade cells, so every such cell of every submission differs from its gradebook
    source and nbgrader logs "Attribute 'checksum' ... has changed!" for each: 14 lines per
    submission that drown the one warning that matters.  A locked cell exactly as released is
    restored silently; one the student edited is still reported (and restored) by nbgrader."""

    def preprocess_cell(self, cell, resources, cell_index):
        self._as_released = False
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id is not None:
            try:
                source = self.gradebook.find_source_cell(grade_id, self.notebook_id, self.assignment_id).source
            except MissingEntry:
                pass
            else:
                self._as_released = cell.source.rstrip() == _HIDDEN_TESTS.sub("", source).rstrip()
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
    """Why nbgrader must not process this submission folder, or None when it may."""
    import nbformat
    from nbgrader.nbgraderformat import MetadataValidator

    try:
        folder = safefiles.Folder(submission)
    except OSError as exc:
        return f"the folder cannot be opened ({exc.strerror})"
    with folder:
        for path in notebooks:
            name = os.path.relpath(path, submission)
            try:
                text = folder.read(name, engine.MAX_NOTEBOOK_BYTES).decode("utf-8")
                notebook = nbformat.reads(text, as_version=4)
                MetadataValidator().validate_nb(notebook)
            except safefiles.Refused as exc:
                return str(exc)
            except RecursionError:
                return f"{name} is nested too deeply to be read"
            except Exception as exc:  # bad JSON or UTF-8, an nbformat or nbgrader schema error
                return f"{name} cannot be processed by nbgrader: {type(exc).__name__}: {str(exc)[:300]}"
    return None


class SafeCopy(BaseConverter):
    """nbgrader's copy of a submission's non-notebook files, without following links.

    It sits between Autograde and BaseConverter in the method resolution order, so that
    Autograde's own `super().init_assignment` lands here."""

    def init_assignment(self, assignment_id, student_id):
        source = self._format_source(assignment_id, student_id)
        dest = self._format_dest(assignment_id, student_id)
        refused = []
        with safefiles.Folder(source) as folder:
            found, refused = folder.files("", "", max_files=10_000)
            for relpath in found:
                if relpath.endswith(".ipynb") or is_ignored(os.path.join(source, relpath), self.coursedir.ignore):
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


class HeroAutogradeConverter(Autograde, SafeCopy):
    """nbgrader's Autograde with the screening and the safe copy described above."""

    skipped = {}  # submission folder -> reason, for the caller

    def init_notebooks(self):
        super().init_notebooks()
        for submission in sorted(self.assignments):
            reason = screen(submission, self.assignments[submission])
            if reason is None:
                continue
            reason = engine.printable(reason)
            del self.assignments[submission]
            self.skipped[submission] = reason
            self.log.error("Skipped %s: %s. Every other submission is graded as usual.", submission, reason)
            student_id, assignment_id = Path(submission).parts[-2:]
            dest = Path(self._format_dest(assignment_id, student_id))
            dest.mkdir(parents=True, exist_ok=True)
            (dest / REPORT_NAME).write_text(json.dumps(
                {"submission": f"{student_id}/{assignment_id}", "skipped": True, "score": 0, "problems": [reason]},
                ensure_ascii=False,
                indent=1), encoding="utf-8")


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
    feedback_app.GenerateFeedback = HeroGenerateFeedback
    handlers = sys.modules.get("nbgrader.server_extensions.formgrader.handlers")
    if handlers is not None and not hasattr(handlers.SubmissionFilesHandler, "_hero_policy"):
        handlers.SubmissionFilesHandler._hero_policy = True
        handlers.SubmissionFilesHandler.content_security_policy = property(_sandboxed_files_policy)

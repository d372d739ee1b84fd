# nbgrader configuration of the hero_transformer course.
# The course root is the repository: sources in course/, the release in student/,
# solutions in solutions/, and by default the SQLite gradebook at gradebook.db.
import os
import sys
import warnings

from autograder import nbgrader_glue, registry

c = get_config()  # noqa: F821 (provided by nbgrader when it loads this file)

# nbgrader runs `alembic` by name to create the gradebook; under `.venv/bin/jupyter lab` or
# `.venv/bin/nbgrader` without an activated venv it is not on PATH (formgrader hangs on Loading)
_bin = os.path.dirname(sys.executable)
if _bin not in os.environ.get("PATH", "").split(os.pathsep):
    os.environ["PATH"] = _bin + os.pathsep + os.environ.get("PATH", "")

# nbgrader's gradebook code trips SQLAlchemy's "not in session" warnings on every autograde;
# they are about nbgrader's own session handling, harmless, and hide the warnings that matter
try:
    from sqlalchemy.exc import SAWarning

    warnings.filterwarnings("ignore", message=".*not in session.*", category=SAWarning)
except ImportError:
    pass

c.CourseDirectory.root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
c.CourseDirectory.course_id = "hero_transformer"
c.CourseDirectory.source_directory = registry.SOURCE_DIR
c.CourseDirectory.release_directory = registry.RELEASE_DIR
c.CourseDirectory.solution_directory = registry.SOLUTION_DIR

# The exchange (release_assignment, fetch, submit; JupyterLab's Assignment List and Courses):
# a folder of this course root on a single machine; a JupyterHub sets its shared one instead
c.Exchange.root = os.path.join(c.CourseDirectory.root, "build", "exchange")
if not os.path.isdir(c.Exchange.root):
    os.makedirs(c.Exchange.root)
    os.chmod(c.Exchange.root, 0o777)  # what nbgrader's release_assignment sets (and warns about otherwise)
# The instructor's side of the exchange: collect attributes each submission to the user who made its
# folder, follows no link and names every folder it refuses; release writes only into exchange folders
# of its own (autograder/exchange.py, docs/hub.md). Students keep nbgrader's own fetch and submit.
c.ExchangeFactory.collect = "autograder.exchange.HeroExchangeCollect"
c.ExchangeFactory.release_assignment = "autograder.exchange.HeroExchangeReleaseAssignment"
c.ExchangeFactory.release_feedback = "autograder.exchange.HeroExchangeReleaseFeedback"

# Student-facing stub of notebook answer cells: each answer cell's `name = ...` line stands
# above its solution, so an unanswered cell raises nothing and Run All goes on to the end.
c.ClearSolutions.code_stub = {"python": "# 在上一行写出你的计算"}

# generate_assignment also writes the chapter's stubbed hero_transformer/ into the release.
c.GenerateAssignment.post_convert_hook = "autograder.release.write_release_package"

# autograde grades out of process (see autograder/nbgrader_glue.py) instead of in a kernel.
# The source folder holds no .py files, so nothing overwrites a student's package; the
# exclusion below keeps it that way if one is ever added there.
c.Autograde.autograde_preprocessors = nbgrader_glue.AUTOGRADE_PREPROCESSORS
# ...and restores released cells without a "checksum has changed" line each (edited ones still warn)
c.Autograde.sanitize_preprocessors = nbgrader_glue.SANITIZE_PREPROCESSORS
# ...and screens each submission first, and copies it without following links
nbgrader_glue.install()
c.Autograde.exclude_overwriting = {
    assignment: [f"{registry.PACKAGE}/{path.name}" for path in (registry.REPO_ROOT / registry.PACKAGE).glob("*.py")]
    for assignment in registry.ASSIGNMENTS
}

# Feedback pages: student HTML cleaned and math pre-rendered to MathML (readable offline, no
# script: autograder/sanitise.py); nbgrader_glue.install() also gives generate_feedback this
# course's page (contents named by grade id, long lines wrapped, a Content-Security-Policy)
c.GenerateFeedback.preprocessors = nbgrader_glue.FEEDBACK_PREPROCESSORS
# formgrader (in the instructor's Jupyter server) cleans every notebook again as it shows it, in a
# submission page with a Content-Security-Policy (docs/grading.md, "Student HTML")
nbgrader_glue.formgrader_exporter_config(c)

# The solution notebook is stored without outputs so that `hero release` is reproducible byte
# for byte; the test suite executes it top to bottom (tests/test_notebook.py) instead.
from nbgrader.preprocessors import ClearMarkScheme, ClearOutput, IncludeHeaderFooter, LockCells  # noqa: E402

c.GenerateSolution.preprocessors = nbgrader_glue.import_paths([IncludeHeaderFooter, LockCells, ClearOutput,
                                                              ClearMarkScheme])

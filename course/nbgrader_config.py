# nbgrader configuration of the hero_transformer course.
# The course root is the repository: sources in course/, the release in student/,
# solutions in solutions/, and by default the SQLite gradebook at gradebook.db.
import os

from autograder import nbgrader_glue, registry, release

c = get_config()  # noqa: F821 (provided by nbgrader when it loads this file)

c.CourseDirectory.root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
c.CourseDirectory.course_id = "hero_transformer"
c.CourseDirectory.source_directory = registry.SOURCE_DIR
c.CourseDirectory.release_directory = registry.RELEASE_DIR
c.CourseDirectory.solution_directory = registry.SOLUTION_DIR

# Student-facing stub of notebook answer cells.
c.ClearSolutions.code_stub = {"python": "# 在这里写你的答案\nraise NotImplementedError()"}

# generate_assignment also writes the chapter's stubbed hero_transformer/ into the release.
c.GenerateAssignment.post_convert_hook = release.write_release_package

# autograde grades out of process (see autograder/nbgrader_glue.py) instead of in a kernel.
# The source folder holds no .py files, so nothing overwrites a student's package; the
# exclusion below keeps it that way if one is ever added there.
c.Autograde.autograde_preprocessors = nbgrader_glue.AUTOGRADE_PREPROCESSORS
# ...and screens each submission first, and copies it without following links
nbgrader_glue.install()
c.Autograde.exclude_overwriting = {
    assignment: [f"{registry.PACKAGE}/{name}" for name in ("__init__.py", "model.py", "checks.py")]
    for assignment in registry.ASSIGNMENTS
}

# The solution notebook is stored without outputs so that `hero release` is reproducible byte
# for byte; the test suite executes it top to bottom (tests/test_notebook.py) instead.
from nbgrader.preprocessors import ClearMarkScheme, ClearOutput, IncludeHeaderFooter, LockCells  # noqa: E402

c.GenerateSolution.preprocessors = [IncludeHeaderFooter, LockCells, ClearOutput, ClearMarkScheme]

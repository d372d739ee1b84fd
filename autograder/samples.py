"""Sample submissions, generated on demand: `hero samples OUT`.

OUT/<assignment>/<sample>/ is shaped like student/<assignment>/ (the notebook and
hero_transformer/):
- `reference`: every exercise and every answer correct;
- `stubs`: the release exactly as a student receives it;
- one folder per entry of the chapter's catalogues: each fault under its own id,
  `correct_<id>` per correct variant, `forbidden_<id>` per forbidden shortcut, each the
  reference with that one exercise body replaced;
- `hostile_<id>` per hostile attempt (autograder/hostile.py), unless left out.

Notebooks come from the committed release (student/, solutions/), which `hero release`
rebuilds and a test keeps current; the packages are rendered from hero_transformer/.
"""

import shutil
from pathlib import Path

from . import hostile, registry, release

HOSTILE_PREFIX = "hostile_"


def default_hostile_values(out: Path):
    """What the hostile templates point at when no test harness chooses: this repository,
    a course root without a gradebook, a marker file and a port nothing listens on."""
    return dict(repo=registry.REPO_ROOT, course=out, home=Path.home(), marker=out / "hostile-marker",
                secret_name="HERO_GRADER_SECRET", port=9, victim="victim-secret-")


def write(out, assignments=None, with_hostile=True, **hostile_values):
    """Write every sample of every assignment (or of the given ones); {assignment id: folder}."""
    out = Path(out)
    values = {**default_hostile_values(out), **hostile_values}
    written = {}
    for assignment in assignments or registry.ASSIGNMENTS.values():
        folder = out / assignment.id
        shutil.rmtree(folder, ignore_errors=True)
        write_assignment(assignment, folder)
        if with_hostile:
            for attempt in assignment.hostile():
                hostile.build(assignment, attempt, folder / (HOSTILE_PREFIX + attempt.id), folder, **values)
        written[assignment.id] = folder
    return written


def planned(assignment):
    """The names of the sample folders `write_assignment` writes, hostile ones aside."""
    return list(dict.fromkeys(["reference", "stubs", *(entry.sample for entry in assignment.entries())]))


def write_assignment(assignment, folder: Path):
    release_nb = registry.REPO_ROOT / registry.RELEASE_DIR / assignment.id / assignment.notebook_name
    solution_nb = registry.REPO_ROOT / registry.SOLUTION_DIR / assignment.id / assignment.notebook_name
    answered = release.answered_notebook(release_nb, solution_nb)
    packages = {"reference": release.sample_package(assignment.chapter),
                "stubs": release.student_package(assignment.chapter)}
    for entry in assignment.entries():
        packages[entry.sample] = release.sample_package(assignment.chapter, entry)
    for name, files in packages.items():
        release.write_files(folder / name, files)
        notebook = release_nb.read_text(encoding="utf-8") if name == "stubs" else answered
        (folder / name / assignment.notebook_name).write_text(notebook, encoding="utf-8")


def names(folder: Path, with_hostile=False):
    """The sample folders written under one assignment's folder, by name."""
    return sorted(p.name for p in folder.iterdir()
                  if p.is_dir() and (with_hostile or not p.name.startswith(HOSTILE_PREFIX)))

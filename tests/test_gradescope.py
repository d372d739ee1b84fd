"""`hero gradescope ASSIGNMENT OUT.zip`, run the way Gradescope runs it.

The zip is built with the CLI and unpacked into /autograder/source of a throw-away root: a
bubblewrap mount namespace whose / holds the host's /usr and /etc read-only, a fresh /tmp, and
/autograder bound from a temporary folder, so Gradescope's absolute paths (/autograder/source,
/autograder/submission, /autograder/results/results.json) are real inside it and the test reads
them afterwards.  setup.sh runs there once (HERO_GRADESCOPE_SITE_PACKAGES points it at this
project's environment instead of pip: offline, seconds), then run_autograder once per
submission, a fresh submission and results folder each time, as Gradescope's fresh container
would have.  results.json is checked against a schema of Gradescope's documented fields and
against the scores each submission must get.  Each check is also shown to fail when what it
checks is broken (the `*_fails_*` tests and the two runs whose grader cannot run).
"""

import hashlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import fastjsonschema
import pytest

from autograder import gradescope, hostile, registry, release, samples
from autograder.sandbox import bubblewrap_works

ASSIGNMENT = registry.ASSIGNMENTS["ch05_block"]
FAULT, HOSTILE = "tanh_gelu", "write_outside"  # the fault costs gelu (2); the attempt hides a wrong layer_norm (3)
SITE = sysconfig.get_paths()["purelib"]  # this project's environment: what setup.sh links instead of pip

# --- Gradescope's results.json, as its autograder specification documents it -----------------
VISIBILITY = {"enum": ["hidden", "after_due_date", "after_published", "visible"]}
FORMAT = {"enum": ["text", "html", "simple_format", "md", "ansi"]}
NUMBER = {"type": "number"}
TEXT = {"type": "string"}
TEST = {
    "type": "object", "additionalProperties": False,
    # every field is optional in the specification; these are the ones this grader promises
    "required": ["name", "score", "max_score", "output", "status", "visibility"],
    "properties": {"score": NUMBER, "max_score": NUMBER, "status": {"enum": ["passed", "failed"]}, "name": TEXT,
                   "name_format": FORMAT, "number": TEXT, "output": TEXT, "output_format": FORMAT,
                   "tags": {"type": "array", "items": TEXT}, "visibility": VISIBILITY, "extra_data": {"type": "object"}},
}
RESULTS = {
    "type": "object", "additionalProperties": False,
    "required": ["score", "output", "execution_time", "stdout_visibility", "tests"],
    "properties": {
        "score": NUMBER, "execution_time": {"type": "number", "minimum": 0}, "output": TEXT, "output_format": FORMAT,
        "test_output_format": FORMAT, "test_name_format": FORMAT, "visibility": VISIBILITY,
        "stdout_visibility": VISIBILITY, "extra_data": {"type": "object"}, "tests": {"type": "array", "items": TEST},
        "leaderboard": {"type": "array", "items": {
            "type": "object", "required": ["name", "value"], "additionalProperties": False,
            "properties": {"name": TEXT, "value": {"type": ["number", "string"]}, "order": {"enum": ["asc", "desc"]}}}},
        # not among the documented fields: report.gradescope writes the maximum beside the score, and
        # Gradescope takes its maximum from the assignment's settings, not from here
        "max_score": NUMBER,
    },
}
validate = fastjsonschema.compile(RESULTS)


def score_problems(results, lost):
    """What is wrong with results.json for a submission that must lose exactly the items `lost`
    (every other item at full marks); [] when nothing is."""
    validate(results)
    points = ASSIGNMENT.points()
    problems = []
    names = [test["name"].split(":")[0] for test in results["tests"]]
    if names != list(points):
        problems.append(f"the tests are {names}, not {ASSIGNMENT.id}'s items {list(points)}")
    for test in results["tests"]:
        item = test["name"].split(":")[0]
        wanted = 0.0 if item in lost else points.get(item)
        if test["score"] != wanted or test["max_score"] != points.get(item):
            problems.append(f"{item}: {test['score']}/{test['max_score']}, wanted {wanted}/{points.get(item)}")
        if test["status"] != ("passed" if test["score"] == test["max_score"] else "failed"):
            problems.append(f"{item}: status {test['status']} for {test['score']}/{test['max_score']}")
    total = sum(points.values()) - sum(points[item] for item in lost)
    if results["score"] != total or results["score"] != sum(test["score"] for test in results["tests"]):
        problems.append(f"score {results['score']}, wanted {total} (the sum of the tests)")
    return problems


def snapshot(folder):
    """Every entry under `folder` except results/: its kind, and its bytes' digest or link target."""
    seen = {}
    for top, dirs, files in os.walk(folder):
        relative_top = os.path.relpath(top, folder)
        if relative_top == "results":
            dirs[:] = []
            continue
        for name in dirs + files:
            path = os.path.join(top, name)
            relpath = os.path.normpath(os.path.join(relative_top, name))
            if relpath == "results":
                continue
            if os.path.islink(path):
                seen[relpath] = ("link", os.readlink(path))
            elif os.path.isfile(path):
                seen[relpath] = ("file", hashlib.sha256(Path(path).read_bytes()).hexdigest())
            else:
                seen[relpath] = ("folder", "")
    return seen


def changes(before, after):
    return sorted(path for path in before.keys() | after.keys() if before.get(path) != after.get(path))


# --- checks of the checks: each fails when what it checks is broken (no sandbox needed) ----------

def _valid_results():
    tests = [{"name": f"{item}: title", "score": value, "max_score": value, "output": "ok", "status": "passed",
              "visibility": "visible"} for item, value in ASSIGNMENT.points().items()]
    return {"score": sum(ASSIGNMENT.points().values()), "max_score": 21.0, "output": "全部通过", "execution_time": 12,
            "visibility": "visible", "stdout_visibility": "hidden", "tests": tests}


@pytest.mark.parametrize("breakage", ["score is text", "no execution_time", "visibility public", "status ok",
                                      "unknown field", "test without output", "negative time"])
def test_the_schema_fails_on_results_gradescope_would_not_read(breakage):
    results = _valid_results()
    validate(results)
    test = results["tests"][0]
    if breakage == "score is text":
        results["score"] = "21"
    elif breakage == "no execution_time":
        del results["execution_time"]
    elif breakage == "visibility public":
        results["stdout_visibility"] = "public"
    elif breakage == "status ok":
        test["status"] = "ok"
    elif breakage == "unknown field":
        test["points"] = 1
    elif breakage == "test without output":
        del test["output"]
    elif breakage == "negative time":
        results["execution_time"] = -1
    with pytest.raises(fastjsonschema.JsonSchemaException):
        validate(results)


def test_the_score_check_fails_on_wrong_scores():
    honest = _valid_results()
    assert score_problems(honest, set()) == []
    assert score_problems(honest, {"gelu"})  # a fault that lost nothing
    lost = _valid_results()
    lost["tests"][6]["score"], lost["tests"][6]["status"], lost["score"] = 0.0, "failed", 19.0
    assert lost["tests"][6]["name"].startswith("gelu:") and score_problems(lost, {"gelu"}) == []
    assert score_problems(lost, set())  # a reference that lost points
    lost["tests"][6]["status"] = "passed"
    assert any("status" in problem for problem in score_problems(lost, {"gelu"}))
    lost["tests"].pop()
    assert score_problems(lost, {"gelu"})  # an item missing


def test_the_snapshot_sees_every_change(tmp_path):
    (tmp_path / "source").mkdir()
    (tmp_path / "source" / "a.py").write_text("a")
    (tmp_path / "results").mkdir()
    before = snapshot(tmp_path)
    (tmp_path / "results" / "results.json").write_text("{}")  # results/ is where writing is allowed
    assert changes(before, snapshot(tmp_path)) == []
    (tmp_path / "source" / "a.py").write_text("b")
    (tmp_path / "pwned").write_text("x")
    (tmp_path / "source" / "link").symlink_to("/etc")
    assert changes(before, snapshot(tmp_path)) == ["pwned", "source/a.py", "source/link"]


def test_staging_finds_flat_and_nested_uploads_and_reads_no_link(tmp_path):
    """What run() copies out of /autograder/submission, without a sandbox."""
    reference = release.sample_package(ASSIGNMENT.chapter)
    nested = tmp_path / "nested" / "work" / ASSIGNMENT.id
    release.write_files(nested, reference)
    (nested / ASSIGNMENT.notebook_name).write_text("{}", encoding="utf-8")
    notes = gradescope.stage(tmp_path / "nested", ASSIGNMENT, tmp_path / "staged_nested")
    assert notes == [f"在文件夹 work/{ASSIGNMENT.id}/ 中找到提交的文件。(Your files were found in the folder "
                     f"work/{ASSIGNMENT.id}/.)"]
    model = f"{registry.PACKAGE}/model.py"
    assert (tmp_path / "staged_nested" / model).read_text(encoding="utf-8") == reference[model]
    flat = tmp_path / "flat"
    flat.mkdir()
    (flat / "model.py").write_text(reference[model], encoding="utf-8")
    notes = gradescope.stage(flat, ASSIGNMENT, tmp_path / "staged_flat")
    assert "model.py uploaded flat" in notes[0] and "Notebook ch05_block.ipynb not found" in notes[1]
    assert (tmp_path / "staged_flat" / model).read_text(encoding="utf-8") == reference[model]
    released = registry.REPO_ROOT / registry.RELEASE_DIR / ASSIGNMENT.id / registry.PACKAGE / "__init__.py"
    assert (tmp_path / "staged_flat" / registry.PACKAGE / "__init__.py").read_bytes() == released.read_bytes()
    linked = tmp_path / "linked" / registry.PACKAGE
    linked.mkdir(parents=True)
    (linked / "model.py").symlink_to(registry.REPO_ROOT / model)  # the reference, through a link
    notes = gradescope.stage(tmp_path / "linked", ASSIGNMENT, tmp_path / "staged_linked")
    staged = (tmp_path / "staged_linked" / model).read_text(encoding="utf-8")
    assert staged != (registry.REPO_ROOT / model).read_text(encoding="utf-8")  # the released stubs instead
    assert any(f"{model} is a symbolic link" in note for note in notes)
    assert any(f"{model} not found" in note for note in notes)


def _upload_with_an_environment(folder):
    """The reference (package and notebook) uploaded with a virtual environment of 2,500 files
    and a data folder of 20,000 beside it, both sorted before hero_transformer/."""
    upload = folder / "upload"
    release.write_files(upload, release.sample_package(ASSIGNMENT.chapter))
    release_nb = registry.REPO_ROOT / registry.RELEASE_DIR / ASSIGNMENT.id / ASSIGNMENT.notebook_name
    solution_nb = registry.REPO_ROOT / registry.SOLUTION_DIR / ASSIGNMENT.id / ASSIGNMENT.notebook_name
    (upload / ASSIGNMENT.notebook_name).write_text(release.answered_notebook(release_nb, solution_nb), "utf-8")
    site = upload / "venv" / "lib" / "python3.11" / "site-packages"
    for index in range(2500):
        (site / f"pkg{index // 100:02d}").mkdir(parents=True, exist_ok=True)
        (site / f"pkg{index // 100:02d}" / f"m{index:04d}.py").touch()
    (upload / "venv" / "bin").mkdir()
    (upload / "venv" / "bin" / "python").symlink_to("/usr/bin/python3")
    (upload / "data").mkdir()
    for index in range(20_000):
        (upload / "data" / f"x{index:05d}").touch()
    return upload


def test_an_environment_beside_the_package_costs_nothing_and_a_limit_refuses_loudly(tmp_path):
    """The walk kept at most 2,000 files of the whole upload and took the large folders first:
    hero_transformer/ was never seen ("model.py not found", 9/21).  Only the files grading reads
    count now; more than the limit of those refuses the upload whole, and says so."""
    upload = _upload_with_an_environment(tmp_path)
    notes = gradescope.stage(upload, ASSIGNMENT, tmp_path / "staged")
    assert notes == [], notes  # nothing missing, nothing refused (the environment's link is not read)
    model = f"{registry.PACKAGE}/model.py"
    assert (tmp_path / "staged" / model).read_bytes() == (upload / model).read_bytes()
    for index in range(gradescope.MAX_FILES):
        (upload / registry.PACKAGE / "extra" / f"m{index:04d}.py").parent.mkdir(exist_ok=True)
        (upload / registry.PACKAGE / "extra" / f"m{index:04d}.py").touch()
    notes = gradescope.stage(upload, ASSIGNMENT, tmp_path / "refused")
    assert notes[0].startswith("上传的文件被整体拒绝，没有评分") and f"more than {gradescope.MAX_FILES} files" in notes[0]
    assert any(f"{model} not found" in note for note in notes) and "Notebook ch05_block.ipynb not found" in notes[-2]


def test_results_json_is_written_whatever_stands_in_its_way(tmp_path):
    """A folder, a link or a file where results/ or results.json must be: removed (never
    followed), and results.json written whole."""
    outside = tmp_path / "outside.json"
    outside.write_text("kept", encoding="utf-8")
    for name, make in {"a folder": lambda path: (path / "inner").mkdir(parents=True),
                       "a link": lambda path: path.symlink_to(outside),
                       "a dangling link": lambda path: path.symlink_to(tmp_path / "nowhere")}.items():
        results = tmp_path / name / "results"
        results.mkdir(parents=True)
        make(results / "results.json")
        gradescope.write_results(results, {"score": 1.0})
        assert json.loads((results / "results.json").read_text(encoding="utf-8")) == {"score": 1.0}, name
        assert sorted(os.listdir(results)) == ["results.json"]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "linked").symlink_to(elsewhere)  # results/ itself a link: replaced by a folder
    gradescope.write_results(tmp_path / "linked", {"score": 2.0})
    assert (tmp_path / "linked").is_dir() and not (tmp_path / "linked").is_symlink() and not os.listdir(elsewhere)
    assert outside.read_text(encoding="utf-8") == "kept"


# --- the bundle, built and run in a throw-away root ----------------------------------------

def _why_not():
    if os.geteuid() != 0:
        return ("the throw-away root keeps root's capabilities for the grader's own bwrap inside it: run as root "
                "(`make test` does)")
    if not bubblewrap_works():
        return "bwrap is not available here: `make test` installs it (apt-get install bubblewrap)"
    if not Path("/usr/bin/python3.11").is_file():
        return "setup.sh needs /usr/bin/python3.11 in the throw-away root (apt-get install python3.11-venv)"
    return None


needs_root_and_bwrap = pytest.mark.skipif(_why_not() is not None, reason=_why_not() or "")


class ThrowAwayRoot:
    """/autograder (a temporary folder) inside a bubblewrap root of the host's /usr and /etc."""

    def __init__(self, folder: Path):
        self.autograder = folder / "autograder"
        for name in ("source", "submission", "results"):
            (self.autograder / name).mkdir(parents=True)
        self.results_in_the_way = None  # a test's function that puts something where results.json goes

    def argv(self, chdir, env=()):
        argv = [shutil.which("bwrap"), "--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"]
        for name in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
            if os.path.islink(name):
                argv += ["--symlink", os.readlink(name), name]
            elif os.path.isdir(name):
                argv += ["--ro-bind", name, name]
        argv += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--bind", str(self.autograder), "/autograder",
                 "--ro-bind", SITE, SITE, "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-net",
                 "--die-with-parent", "--cap-add", "ALL", "--clearenv",
                 "--setenv", "PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                 "--setenv", "HOME", "/root", "--setenv", "LANG", "C.UTF-8", "--chdir", chdir]
        for name, value in env:
            argv += ["--setenv", name, value]
        return argv

    def setup(self):
        return subprocess.run([*self.argv("/autograder/source", [("HERO_GRADESCOPE_SITE_PACKAGES", SITE)]),
                               "bash", "./setup.sh"], capture_output=True, text=True, timeout=600)

    def run_autograder(self, submission: Path, env=()):
        """A fresh submission and results folder, run_autograder; (results.json or None, the run's
        output, what changed under /autograder outside results/)."""
        for name in ("submission", "results"):
            shutil.rmtree(self.autograder / name)
            (self.autograder / name).mkdir()
        if self.results_in_the_way:
            self.results_in_the_way(self.autograder / "results")
        shutil.copytree(submission, self.autograder / "submission", dirs_exist_ok=True, symlinks=True)
        before = snapshot(self.autograder)
        done = subprocess.run([*self.argv("/autograder", env), "/autograder/run_autograder"], capture_output=True,
                              text=True, timeout=600)
        path = self.autograder / "results" / "results.json"
        results = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
        return results, done.stdout + done.stderr, changes(before, snapshot(self.autograder))


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    folder = tmp_path_factory.mktemp("gradescope")
    bundle = folder / "autograder.zip"
    built = subprocess.run([sys.executable, "-m", "autograder.cli", "gradescope", ASSIGNMENT.id, str(bundle)],
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stderr[-3000:]
    box = ThrowAwayRoot(folder)
    with zipfile.ZipFile(bundle) as archive:
        top = {name for name in archive.namelist() if "/" not in name}
        assert {"setup.sh", "run_autograder", gradescope.CONFIG_NAME, gradescope.REQUIREMENTS_NAME} <= top
        for info in archive.infolist():  # as unzip does: the permissions the zip records
            path = archive.extract(info, box.autograder / "source")
            os.chmod(path, (info.external_attr >> 16) & 0o777)
    assert os.access(box.autograder / "source" / "run_autograder", os.X_OK)
    config = json.loads((box.autograder / "source" / gradescope.CONFIG_NAME).read_text(encoding="utf-8"))
    assert config["assignment"] == ASSIGNMENT.id
    setup = (box.autograder / "source" / "setup.sh").read_text(encoding="utf-8")
    # Gradescope's own build installs torch, pinned, before anything that depends on it
    assert setup.index("pip\" install --quiet --no-cache-dir torch==2.13.0") < setup.index("-r \"$SOURCE/requirements")
    done = box.setup()
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    assert f"grader ready for {ASSIGNMENT.id}" in done.stdout
    # Gradescope copies run_autograder to /autograder/run_autograder when it builds the image
    shutil.copy2(box.autograder / "source" / "run_autograder", box.autograder / "run_autograder")
    return box


@pytest.fixture(scope="module")
def submissions(tmp_path_factory):
    """The reference, one fault, and one hostile attempt aimed at Gradescope's own paths."""
    folder = tmp_path_factory.mktemp("gradescope-samples")
    release_nb = registry.REPO_ROOT / registry.RELEASE_DIR / ASSIGNMENT.id / ASSIGNMENT.notebook_name
    solution_nb = registry.REPO_ROOT / registry.SOLUTION_DIR / ASSIGNMENT.id / ASSIGNMENT.notebook_name
    answered = release.answered_notebook(release_nb, solution_nb)
    entries = {entry.sample: entry for entry in ASSIGNMENT.entries()}
    attempt = next(a for a in ASSIGNMENT.hostile() if a.id == HOSTILE)
    wrong = ASSIGNMENT.part("hostile").WRONG_BODY[attempt.target]
    for name in ("reference", FAULT, wrong):
        release.write_files(folder / name, release.sample_package(ASSIGNMENT.chapter, entries.get(name)))
        (folder / name / ASSIGNMENT.notebook_name).write_text(answered, encoding="utf-8")
    # it tries to overwrite results.json and to write into the grader's source and the submission
    values = {**samples.default_hostile_values(folder), "marker": "/autograder/results/results.json",
              "repo": "/autograder/source", "home": "/autograder/submission", "course": "/autograder"}
    hostile.build(ASSIGNMENT, attempt, folder / "hostile", folder, **values)
    assert "/autograder/results/results.json" in (folder / "hostile" / "hero_transformer" / "model.py").read_text()
    return folder


@needs_root_and_bwrap
def test_an_honest_submission_inside_a_folder_gets_full_marks(root, submissions, tmp_path):
    upload = tmp_path / "upload"
    shutil.copytree(submissions / "reference", upload / ASSIGNMENT.id)  # a zip of the chapter's folder
    results, output, changed = root.run_autograder(upload)
    assert results is not None, output[-3000:]
    assert score_problems(results, set()) == [], output[-3000:]
    assert results["output"].startswith(f"在文件夹 {ASSIGNMENT.id}/ 中找到提交的文件。")
    assert "21/21：全部 14 个评分项通过（包括隐藏测试）。" in results["output"]
    assert "Isolation: bubblewrap" in results["output"] and "没有找到" not in results["output"]
    assert changed == []


@needs_root_and_bwrap
def test_a_flat_upload_without_the_notebook_is_told_so(root, submissions, tmp_path):
    upload = tmp_path / "upload"
    upload.mkdir()
    shutil.copy(submissions / "reference" / registry.PACKAGE / "model.py", upload / "model.py")
    results, output, changed = root.run_autograder(upload)
    assert results is not None, output[-3000:]
    assert score_problems(results, {answer.id for answer in ASSIGNMENT.answers}) == [], output[-3000:]
    assert "model.py uploaded flat, without the hero_transformer/ folder" in results["output"]
    assert "没有找到笔记本 ch05_block.ipynb" in results["output"] and "every answer scores 0" in results["output"]
    assert changed == []


@needs_root_and_bwrap
def test_a_faulty_submission_loses_exactly_its_exercise(root, submissions):
    results, output, changed = root.run_autograder(submissions / FAULT)
    assert results is not None, output[-3000:]
    assert score_problems(results, {"gelu"}) == [], output[-3000:]
    gelu = next(test for test in results["tests"] if test["name"].startswith("gelu:"))
    assert "tanh" in gelu["output"] and "1 of 14 graded items lost points (gelu)" in results["output"]
    assert changed == []


@needs_root_and_bwrap
def test_a_hostile_submission_loses_and_changes_nothing(root, submissions):
    results, output, changed = root.run_autograder(submissions / "hostile")
    assert results is not None, output[-3000:]
    assert score_problems(results, {"layer_norm"}) == [], output[-3000:]
    assert "pwned" not in json.dumps(results) and sorted(os.listdir(root.autograder / "results")) == ["results.json"]
    assert changed == [], changed
    # the check sees the attempt succeed where the grader's sandbox is off (student code run as root)
    results, output, changed = root.run_autograder(submissions / "hostile", env=[("HERO_SANDBOX", "process")])
    assert "Isolation: process" in results["output"], output[-3000:]
    assert {"source/hero-pwned.txt", "submission/hero-pwned.txt"} <= set(changed), changed


@needs_root_and_bwrap
def test_a_grader_that_fails_still_writes_results_json(root, submissions):
    """The grader refuses (the bundle's assignment is unknown to it), then its interpreter is
    gone: both runs still end with a results.json Gradescope reads, and no points.  Without
    run_autograder's own fallback, the second run leaves none: the check sees that too."""
    config = root.autograder / "source" / gradescope.CONFIG_NAME
    kept = config.read_text(encoding="utf-8")
    try:
        config.write_text(json.dumps({"assignment": "ch99_nothing"}), encoding="utf-8")
        results, output, _ = root.run_autograder(submissions / "reference")
    finally:
        config.write_text(kept, encoding="utf-8")
    validate(results)
    assert results["score"] == 0 and results["tests"] == []
    assert "评分程序出错" in results["output"] and "ch99_nothing" in results["output"], output[-2000:]

    venv = root.autograder / "hero-venv"
    script = root.autograder / "run_autograder"
    kept_script = script.read_text(encoding="utf-8")
    venv.rename(venv.with_name("hero-venv.away"))
    try:
        results, output, _ = root.run_autograder(submissions / "reference")
        validate(results)
        assert results["score"] == 0 and "评分程序未能启动" in results["output"]
        script.write_text(kept_script.split("if [ ! -f")[0] + "exit 0\n", encoding="utf-8")  # no fallback
        results, output, _ = root.run_autograder(submissions / "reference")
        assert results is None
    finally:
        script.write_text(kept_script, encoding="utf-8")
        venv.with_name("hero-venv.away").rename(venv)


@needs_root_and_bwrap
def test_an_upload_with_an_environment_gets_full_marks(root, tmp_path):
    results, output, changed = root.run_autograder(_upload_with_an_environment(tmp_path))
    assert results is not None, output[-3000:]
    assert score_problems(results, set()) == [], output[-3000:]
    assert "21/21" in results["output"] and "not found" not in results["output"] and changed == []


@needs_root_and_bwrap
def test_a_results_json_that_is_a_folder_still_ends_with_results_json(root, submissions):
    """Before, the last write sat outside every fallback: exit 0 and no results.json."""
    def folder_in_the_way(results):
        (results / "results.json" / "inner").mkdir(parents=True)
    root.results_in_the_way = folder_in_the_way
    try:
        results, output, _ = root.run_autograder(submissions / "reference")
    finally:
        root.results_in_the_way = None
    assert results is not None, output[-3000:]
    assert score_problems(results, set()) == [], output[-3000:]

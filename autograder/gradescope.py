"""A Gradescope autograder for one assignment: `hero gradescope ASSIGNMENT OUT.zip`.

The zip is what an instructor uploads to Gradescope as it is (docs/gradescope.md).  At its top
level, as Gradescope's autograder specification asks:

- `setup.sh`: run once, as root, when Gradescope builds the autograder image (the zip unpacked
  in /autograder/source): bubblewrap and libseccomp with apt-get when missing, Python 3.11, a
  virtual environment in /autograder/hero-venv with torch installed first (`pip install
  torch==2.13.0`, as the Makefile does) and then `requirements.txt`, and this grader made
  importable from /autograder/source;
- `run_autograder`: run for every submission; it calls `python -m autograder.gradescope run`
  (`run` below), and writes a results.json of its own if even that could not run;
- `hero_gradescope.json`: the assignment the bundle grades, fixed when the bundle was built: a
  submission is graded as that assignment whatever it uploads;
- `requirements.txt`: the grader's runtime packages, pinned to the versions of the environment
  that built the zip (the one `hero grade` runs in);
- the grader itself (`autograder/`), the reference package (`hero_transformer/`), the course's
  source notebooks (`course/<chapter>/`, where points live) and the assignment's released
  package (`student/<assignment>/hero_transformer/`, for the files a student did not upload).

`run` finds the submission in /autograder/submission (uploaded flat, or inside a folder),
copies what it grades (the notebook and the package's files, regular files only, read without
following links) into a scratch folder, grades it with `hero grade ... --gradescope`, the one
results.json writer (autograder/report.py), adds what it noticed about the upload and the
execution time, and writes /autograder/results/results.json.  A submission that crashes or
attacks the grader loses its points; the run never ends without a results.json.

setup.sh's one test-only switch: HERO_GRADESCOPE_SITE_PACKAGES=DIR skips pip (the virtual
environment then reads its packages from DIR, an environment already built, through a .pth
file), so tests/test_gradescope.py builds and runs the bundle offline in seconds.  On Gradescope
the variable is unset and setup.sh installs the packages with pip.
"""

import argparse
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from importlib import metadata
from pathlib import Path, PurePosixPath

from . import registry, safefiles

CONFIG_NAME = "hero_gradescope.json"
REQUIREMENTS_NAME = "requirements.txt"
ROOT = Path("/autograder")  # Gradescope's layout: source/, submission/, results/results.json
VENV = "/autograder/hero-venv"
# the grader's runtime packages beside torch: what `hero grade` imports, and the worker's IPython
RUNTIME_PACKAGES = ("numpy", "fastjsonschema", "pyseccomp", "nbformat", "tqdm", "ipython")
DEFAULT_LIMIT = 540  # seconds for one submission: under Gradescope's default 10-minute limit
# what run() copies out of a submission, at most (MAX_FILES counts only files grading reads)
MAX_FILES, MAX_FILE_BYTES, MAX_TOTAL_BYTES = 2000, 32 * 1024**2, 128 * 1024**2
SKIPPED_PARTS = ("__MACOSX", "__pycache__", ".ipynb_checkpoints")
FIXED_TIME = (2020, 1, 1, 0, 0, 0)  # zip entries' timestamps: the same sources give the same zip

SETUP_SH = r"""#!/usr/bin/env bash
# Written by `hero gradescope`.  Gradescope runs this once, as root, when it builds the
# autograder image (Ubuntu 22.04 base image), with the zip unpacked in /autograder/source.
set -euo pipefail
SOURCE=/autograder/source
VENV=__VENV__
export DEBIAN_FRONTEND=noninteractive

# the grader's sandbox (bubblewrap) and its system-call filter (libseccomp)
if ! { command -v bwrap >/dev/null 2>&1 && ldconfig -p | grep -q libseccomp.so.2; }; then
    apt-get update -qq
    apt-get install -y -qq bubblewrap libseccomp2
fi

# Python 3.11 with venv (on Ubuntu 22.04: the python3.11 and python3.11-venv packages)
PYTHON=${HERO_PYTHON:-python3.11}
NEEDED="import venv, ensurepip"
if [ -n "${HERO_GRADESCOPE_SITE_PACKAGES:-}" ]; then
    NEEDED="import venv"
fi
if ! "$PYTHON" -c "$NEEDED" >/dev/null 2>&1; then
    apt-get update -qq
    apt-get install -y -qq python3.11 python3.11-venv
    PYTHON=python3.11
fi

rm -rf "$VENV"
if [ -n "${HERO_GRADESCOPE_SITE_PACKAGES:-}" ]; then
    # tests only (tests/test_gradescope.py): no pip, no download; the packages come from an
    # environment already built, through a .pth file
    "$PYTHON" -m venv --without-pip "$VENV"
    SITE=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
    printf '%s\n' "$HERO_GRADESCOPE_SITE_PACKAGES" > "$SITE/hero-packages.pth"
else
    "$PYTHON" -m venv "$VENV"
    # torch first, pinned: a bare requirement on torch would pull another (multi-GB) build
    "$VENV/bin/pip" install --quiet --no-cache-dir __TORCH__
    "$VENV/bin/pip" install --quiet --no-cache-dir -r "$SOURCE/requirements.txt"
    SITE=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
fi
# the grader and the reference run from /autograder/source, where the course's files are
printf '%s\n' "$SOURCE" > "$SITE/hero-grader.pth"
# compiled once here: run_autograder runs with -B and writes nothing into /autograder/source
"$VENV/bin/python" -m compileall -q "$SOURCE/autograder" "$SOURCE/hero_transformer" >/dev/null
"$VENV/bin/python" -I -B -m autograder.gradescope check
"""

RUN_AUTOGRADER = r"""#!/usr/bin/env bash
# Written by `hero gradescope`.  Gradescope runs this for every submission, as root, in
# /autograder; the student's files are in /autograder/submission.
set -u
RESULTS=/autograder/results
# a link, file or folder in the way of results/ or results.json is removed (never followed)
if [ -L "$RESULTS" ] || { [ -e "$RESULTS" ] && [ ! -d "$RESULTS" ]; }; then rm -f "$RESULTS"; fi
mkdir -p "$RESULTS"
rm -rf "$RESULTS/results.json"
cd /autograder
__VENV__/bin/python -I -B -m autograder.gradescope run
if [ ! -f "$RESULTS/results.json" ] || [ -L "$RESULTS/results.json" ]; then
    # the grader could not even start: still a results.json, and no points
    rm -rf "$RESULTS/results.json"
    cat > "$RESULTS/results.json" <<'EOF' || exit 1
{"score": 0.0, "output": "评分程序未能启动，本次提交没有评分，请告诉教师。(The grader could not start: this submission was not graded; please tell your instructor.)", "execution_time": 0, "visibility": "visible", "stdout_visibility": "hidden", "tests": []}
EOF
fi
exit 0
"""


# --- building the zip -------------------------------------------------------------------

def _pins():
    """requirements.txt: the runtime packages at the versions this environment runs."""
    lines = ["# the grader's runtime packages, at the versions of the environment that built this zip",
             "# (setup.sh installs torch first, pinned, then these)"]
    for name in RUNTIME_PACKAGES:
        lines.append(f"{name}=={metadata.version(name)}")
    return "\n".join(lines) + "\n"


def torch_pin():
    return "torch==" + metadata.version("torch").split("+")[0]


def _tree(folder: Path, arcbase: str):
    """(arcname, path) of every regular file under `folder`, without caches or links."""
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        if any(part in SKIPPED_PARTS for part in relative.parts) or path.suffix == ".pyc":
            continue
        if path.is_file() and not path.is_symlink():
            yield f"{arcbase}/{relative.as_posix()}", path


def bundle_entries(assignment, limit=DEFAULT_LIMIT, timeout=10.0):
    """Every entry of the zip: (arcname, bytes or a file's path, executable)."""
    root = registry.REPO_ROOT
    config = {"assignment": assignment.id, "timeout": timeout, "limit_s": limit,
              "built_by": "hero gradescope", "torch": torch_pin()}
    entries = [
        ("setup.sh", SETUP_SH.replace("__VENV__", VENV).replace("__TORCH__", torch_pin()).encode(), True),
        ("run_autograder", RUN_AUTOGRADER.replace("__VENV__", VENV).encode(), True),
        (CONFIG_NAME, (json.dumps(config, indent=2) + "\n").encode(), False),
        (REQUIREMENTS_NAME, _pins().encode(), False),
    ]
    trees = [(root / "autograder", "autograder"), (root / registry.PACKAGE, registry.PACKAGE)]
    trees += [(root / registry.SOURCE_DIR / name, f"{registry.SOURCE_DIR}/{name}") for name in registry.ASSIGNMENTS]
    released = f"{registry.RELEASE_DIR}/{assignment.id}/{registry.PACKAGE}"
    trees.append((root / released, released))
    for folder, arcbase in trees:
        if not folder.is_dir():
            raise FileNotFoundError(f"{folder} is missing: the bundle needs it (run `hero release` for {released})")
        entries += [(arcname, path, False) for arcname, path in _tree(folder, arcbase)]
    return entries


def build(assignment_id, out, limit=DEFAULT_LIMIT, timeout=10.0):
    """Write the zip; returns (path, number of files, bytes)."""
    if assignment_id not in registry.ASSIGNMENTS:
        raise registry.UnknownAssignment(f"unknown assignment {assignment_id!r}; known: "
                                         f"{', '.join(registry.ASSIGNMENTS)}")
    entries = bundle_entries(registry.ASSIGNMENTS[assignment_id], limit, timeout)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as bundle:
        for arcname, content, executable in entries:
            info = zipfile.ZipInfo(arcname, FIXED_TIME)
            info.external_attr = ((0o100755 if executable else 0o100644) << 16)
            info.compress_type = zipfile.ZIP_DEFLATED
            bundle.writestr(info, content if isinstance(content, bytes) else content.read_bytes())
    partial = out.with_name(out.name + ".partial")
    partial.write_bytes(buffer.getvalue())
    os.replace(partial, out)
    return out, len(entries), out.stat().st_size


# --- running on Gradescope ----------------------------------------------------------------

def load_config(source=None):
    path = Path(source or registry.REPO_ROOT) / CONFIG_NAME
    config = json.loads(path.read_text(encoding="utf-8"))
    if config.get("assignment") not in registry.ASSIGNMENTS:
        raise registry.UnknownAssignment(f"{path} names the assignment {config.get('assignment')!r}, which this "
                                         f"grader does not know (known: {', '.join(registry.ASSIGNMENTS)})")
    return config


def _skipped(relpath):
    return any(part in SKIPPED_PARTS or part.startswith(".") for part in PurePosixPath(relpath).parts)


def _locate(files, assignment, modules):
    """The folder of the submission (relative, "" for its top) that holds the upload: the one
    with the notebook and the package (or its modules uploaded flat), the shallowest first."""
    found = {}
    for relpath in files:
        path = PurePosixPath(relpath)
        parts = path.parts
        if registry.PACKAGE in parts[:-1]:
            index = parts.index(registry.PACKAGE)
            found.setdefault(PurePosixPath(*parts[:index]).as_posix() if index else "", set()).add("package")
        elif path.name == assignment.notebook_name:
            found.setdefault(path.parent.as_posix() if len(parts) > 1 else "", set()).add("notebook")
        elif path.name in modules:
            found.setdefault(path.parent.as_posix() if len(parts) > 1 else "", set()).add("flat")
    if not found:
        return "", set()

    def rank(item):
        folder, kinds = item
        return (-("notebook" in kinds) - bool(kinds & {"package", "flat"}), 0 if not folder else folder.count("/") + 1,
                folder)
    return min(found.items(), key=rank)


def stage(submission, assignment, dest, release_package=None):
    """Copy what is graded out of the submission folder into `dest` (a folder shaped like
    student/<assignment>/): its notebook, and the released package overlaid with the student's
    package files.  Only regular files, read without following a link.  Returns the notes for
    results.json: Chinese first, the English in parentheses; student file names made printable."""
    from .report import printable

    release_package = Path(release_package or registry.REPO_ROOT / registry.RELEASE_DIR / assignment.id
                           / registry.PACKAGE)
    released = {path.relative_to(release_package).as_posix(): path for path in sorted(release_package.rglob("*"))
                if path.is_file() and "__pycache__" not in path.parts}
    modules = {name for name in released if "/" not in name and name.endswith(".py")}
    notes, copied = [], {}

    def graded(relpath):  # what grading may read, wherever the upload put it
        parts = PurePosixPath(relpath).parts
        return (not _skipped(relpath)
                and (registry.PACKAGE in parts or parts[-1] == assignment.notebook_name or parts[-1] in modules))

    with safefiles.Folder(submission) as folder:
        # only what grading reads is kept and counted: an environment or a data folder uploaded
        # beside the package costs nothing, and a limit refuses the upload whole, saying so
        try:
            files, refused = folder.files("", "", MAX_FILES, keep=graded, enter=lambda relpath: not _skipped(relpath),
                                          strict=True)
        except safefiles.TooLarge as exc:
            files, refused = [], []
            notes.append(f"上传的文件被整体拒绝，没有评分：{exc}。(The upload was refused whole and not graded: {exc}.)")
        where, kinds = _locate(files, assignment, modules)
        prefix = f"{where}/" if where else ""
        if where:
            notes.append(f"在文件夹 {where}/ 中找到提交的文件。(Your files were found in the folder {where}/.)")
        wanted = {}
        notebook = prefix + assignment.notebook_name
        if notebook in files:
            wanted[notebook] = assignment.notebook_name
        package_prefix = prefix + registry.PACKAGE + "/"
        if "package" in kinds:
            for relpath in files:
                if relpath.startswith(package_prefix):
                    wanted[relpath] = registry.PACKAGE + "/" + relpath[len(package_prefix):]
        elif "flat" in kinds:
            flat = [relpath for relpath in files if relpath.startswith(prefix) and "/" not in relpath[len(prefix):]
                    and relpath[len(prefix):] in modules]
            for relpath in flat:
                wanted[relpath] = f"{registry.PACKAGE}/{relpath[len(prefix):]}"
            names = ", ".join(relpath[len(prefix):] for relpath in flat)
            notes.append(f"{names} 没有放在 {registry.PACKAGE}/ 文件夹里（平铺上传），按 {registry.PACKAGE}/ 中的文件评分。"
                         f"({names} uploaded flat, without the {registry.PACKAGE}/ folder: graded as the files of "
                         f"{registry.PACKAGE}/.)")
        total = 0
        for relpath, target in wanted.items():
            try:
                data = folder.read(relpath, MAX_FILE_BYTES)
            except (OSError, safefiles.Refused) as exc:
                refused.append(str(exc))
                continue
            total += len(data)
            if total > MAX_TOTAL_BYTES:
                refused.append(f"{relpath}: the upload is larger than {MAX_TOTAL_BYTES} bytes in all")
                break
            copied[target] = data
    for relpath, path in released.items():  # what the student did not upload: as released
        copied.setdefault(f"{registry.PACKAGE}/{relpath}", path.read_bytes())
    for target, data in copied.items():
        path = Path(dest, target)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    if assignment.notebook_name not in copied:
        notes.append(f"没有找到笔记本 {assignment.notebook_name}：所有作答题 (answers) 记 0 分；请上传它。"
                     f"(Notebook {assignment.notebook_name} not found: every answer scores 0; upload it.)")
    uploaded = {target for target in copied if target in wanted.values()}
    for module in sorted({f"{registry.PACKAGE}/{e.module}.py" for e in assignment.exercises} - uploaded):
        notes.append(f"没有找到 {module}：其中的练习 (exercises) 按发布时的存根 (stub) 评分，记 0 分；请上传 "
                     f"{registry.PACKAGE}/ 文件夹。({module} not found: its exercises were graded as the released "
                     f"stubs, 0 points; upload the {registry.PACKAGE}/ folder.)")
    if refused:
        listed = "; ".join(refused[:20]) + ("; ..." if len(refused) > 20 else "")
        notes.append(f"以下文件没有读取，也不评分 (files not read, not graded): {listed}")
    return [printable(note) for note in notes]


def failed_results(reason):
    """results.json when the grader itself failed: no points, and the reason."""
    from .report import printable

    return {"score": 0.0, "output": printable(f"评分程序出错，本次提交没有评分，请告诉教师。(The grader failed: this submission "
                                              f"was not graded; please tell your instructor.)\n{reason}"),
            "visibility": "visible", "stdout_visibility": "hidden", "tests": []}


def _grade(staged, assignment, scratch, config):
    """results.json's content from `hero grade --gradescope`, or failed_results."""
    out = Path(scratch, "results.json")
    command = [sys.executable, "-I", "-B", "-m", "autograder.cli", "grade", str(staged), "--assignment",
               assignment.id, "--gradescope", str(out), "--timeout", str(config.get("timeout", 10.0))]
    limit = float(config.get("limit_s", DEFAULT_LIMIT))
    proc = subprocess.Popen(command, cwd=scratch, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        log, _ = proc.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        log, _ = proc.communicate()
        sys.stdout.write(log.decode("utf-8", "replace"))
        return failed_results(f"评分超过 {limit:g} 秒，已停止。(Grading took over {limit:g} s and was stopped.)")
    text = log.decode("utf-8", "replace")
    sys.stdout.write(text)  # Gradescope shows run_autograder's output to instructors only
    try:
        results = json.loads(out.read_text(encoding="utf-8"))
        if proc.returncode == 0 and isinstance(results, dict) and isinstance(results.get("tests"), list):
            return results
    except (OSError, ValueError):
        pass
    last = next((line for line in reversed(text.splitlines()) if line.strip()), "")
    return failed_results(f"hero grade exited with status {proc.returncode}: {last}")


def run(root=ROOT):
    """Grade /autograder/submission as the bundle's assignment into /autograder/results/results.json."""
    started = time.monotonic()
    results_dir = Path(root, "results")
    notes = []
    try:
        config = load_config()
        assignment = registry.ASSIGNMENTS[config["assignment"]]
        print(f"hero gradescope: grading {Path(root, 'submission')} as {assignment.id}", flush=True)
        with tempfile.TemporaryDirectory(prefix="hero-gradescope-") as scratch:
            staged = Path(scratch, assignment.id)
            notes = stage(Path(root, "submission"), assignment, staged)
            results = _grade(staged, assignment, scratch, config)
    except Exception as exc:  # noqa: BLE001 - whatever failed, the submission gets a results.json
        import traceback

        traceback.print_exc()
        results = failed_results(f"{type(exc).__name__}: {exc}")
    results["output"] = "\n".join([*notes, results.get("output", "")]).strip()
    results["execution_time"] = int(round(time.monotonic() - started))
    try:
        write_results(results_dir, results)
    except OSError as exc:  # run_autograder's own fallback tries once more; the exit status says so
        print(f"hero gradescope: could not write {results_dir / 'results.json'}: {exc}", file=sys.stderr)
        return 1
    print(f"hero gradescope: {results.get('score')} points; results in {results_dir / 'results.json'}")
    return 0


def _remove(path):
    """Whatever is at `path` (a file, a link, a folder and all it holds), links never followed."""
    if path.is_symlink() or not path.is_dir():
        path.unlink(missing_ok=True)
    else:
        shutil.rmtree(path)


def write_results(results_dir, results):
    """results.json written whole (a temporary file renamed into place); whatever stands where
    results/ must be a folder, or where results.json goes (a folder, a link), is removed first."""
    results_dir = Path(results_dir)
    if results_dir.is_symlink() or (os.path.lexists(results_dir) and not results_dir.is_dir()):
        _remove(results_dir)
    results_dir.mkdir(parents=True, exist_ok=True)
    partial, final = results_dir / "results.json.partial", results_dir / "results.json"
    _remove(partial)
    if final.is_symlink() or (os.path.lexists(final) and not final.is_file()):
        _remove(final)
    with open(partial, "x", encoding="utf-8") as out:
        out.write(json.dumps(results, ensure_ascii=False, indent=2))
    os.replace(partial, final)


def check():
    """setup.sh's last step: the grader imports, and says whether its sandbox works here."""
    import torch  # noqa: F401 - the heaviest import, checked at build time

    from .sandbox import bubblewrap_works

    config = load_config()
    print(f"hero gradescope: grader ready for {config['assignment']} (torch {torch.__version__}, "
          f"Python {sys.version.split()[0]})")
    if not bubblewrap_works():
        print("hero gradescope: WARNING: bwrap does not run here; every submission will get a results.json "
              "saying the grader refused to run student code without its sandbox")
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m autograder.gradescope")
    parser.add_argument("action", choices=("run", "check"))
    args = parser.parse_args(argv)
    return run() if args.action == "run" else check()


if __name__ == "__main__":
    sys.exit(main())

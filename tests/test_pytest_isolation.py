"""pytest's process never runs student code, wherever pytest is started from.

A submission folder carries every route into pytest's process that the red team found or we
could think of: a `conftest.py`, a plugin loaded by `-p` from the `addopts` of each kind of ini
file, `pythonpath` in the ini, `sitecustomize.py`/`usercustomize.py`, and `pytest.py` and
`_pytest/` shadowing pytest itself.  Each writes a marker file when imported and tries to mark
every item passed.  Graded from inside the folder, from its parent and from the repository root,
no marker appears and the unfilled release scores 0 on every item.  Neither is this repository's
own tests/conftest.py imported (it writes $HERO_TEST_CONFTEST_MARKER when it is).  Run as
subprocesses: the guard acts at interpreter start (autograder/pytest_guard.py)."""

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from xml.etree import ElementTree

import pytest

from autograder import pytest_guard, registry

ASSIGNMENT = registry.ASSIGNMENTS["ch05_block"]
ITEMS = [item.id for item in ASSIGNMENT.exercises + ASSIGNMENT.answers]
RELEASE = registry.REPO_ROOT / registry.RELEASE_DIR / ASSIGNMENT.id
CONFIG_FILES = ("pytest.toml", ".pytest.toml", "pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")
# a hook that turns every failed item into a pass: what a loaded conftest or plugin would do
PASS_EVERYTHING = '''
import pytest

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    outcome.get_result().outcome = "passed"
'''


def _marker_code(markers, name):
    return f"open({str(markers / name)!r}, 'w').write('loaded')\n"


def _ini(name):
    """A config file of that name whose addopts load the submission's plugin and whose pythonpath
    puts the submission on sys.path."""
    if name.endswith(".toml"):
        table = "[tool.pytest.ini_options]" if name == "pyproject.toml" else "[pytest]"
        return f'{table}\naddopts = "-p evil"\npythonpath = ["."]\n'
    section = "[tool:pytest]" if name == "setup.cfg" else "[pytest]"
    return f"{section}\naddopts = -p evil\npythonpath = .\n"


def hostile_release(root: Path, config_files=("pytest.ini",)):
    """The chapter-5 release (every stub unfilled) with every route into pytest's process."""
    folder, markers = root / "sub", root / "markers"
    shutil.copytree(RELEASE, folder, ignore=shutil.ignore_patterns("__pycache__"))
    markers.mkdir()
    for module in ("conftest", "evil"):  # a conftest, and the plugin the ini's addopts name
        (folder / f"{module}.py").write_text(_marker_code(markers, module) + PASS_EVERYTHING, encoding="utf-8")
    for module in ("sitecustomize", "usercustomize", "pytest", "_distutils_hack", "tempfile", "sysconfig"):
        (folder / f"{module}.py").write_text(_marker_code(markers, module), encoding="utf-8")
    (folder / "_pytest").mkdir()
    (folder / "_pytest" / "__init__.py").write_text(_marker_code(markers, "_pytest"), encoding="utf-8")
    for name in config_files:
        (folder / name).write_text(_ini(name), encoding="utf-8")
    return folder, markers


def run(command, cwd, env=None, timeout=600, markers=None):
    """`markers`: the folder where tests/conftest.py, were it imported, leaves its marker."""
    started = time.monotonic()
    suite = {"HERO_TEST_CONFTEST_MARKER": str(markers / "tests_conftest")} if markers else {}
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **suite, **(env or {})})
    done.seconds = time.monotonic() - started
    return done


def pytest_command(*args, script=False):
    start = [str(Path(sys.executable).with_name("pytest"))] if script else [sys.executable, "-m", "pytest"]
    return [*start, *args, "--hero-assignment", "ch05_block"]


def _scores(junit):
    return {case.get("name"): float({p.get("name"): p.get("value") for p in case.iter("property")}["points"])
            for case in ElementTree.parse(junit).getroot().iter("testcase")}


def _assert_honest(done, junit, markers, folder):
    output = done.stdout + done.stderr
    assert not sorted(p.name for p in markers.iterdir()), f"student code ran in pytest's process: {output[-3000:]}"
    assert done.returncode == 1, output[-3000:]
    assert f"{len(ITEMS)} failed" in done.stdout and " passed" not in done.stdout.splitlines()[-1], output[-3000:]
    assert _scores(junit) == {item: 0.0 for item in ITEMS}
    assert not (folder / ".pytest_cache").exists()


@pytest.fixture(scope="module", autouse=True)
def guard_installed():
    assert pytest_guard.installed(), ("the pytest guard is not installed in this environment: "
                                      "`python -m autograder.pytest_guard install` (make does it)")


@pytest.mark.parametrize("where, script", [("inside", False), ("parent", False), ("repository", False),
                                           ("repository", True)])
def test_no_route_of_the_submission_runs_in_pytest(tmp_path, where, script):
    """From the repository root too, where pytest would otherwise read its pyproject.toml and
    tests/conftest.py (the suite's own fixtures): the marker shows the conftest is not imported."""
    folder, markers = hostile_release(tmp_path)
    junit = tmp_path / "junit.xml"
    cwd, path = {"inside": (folder, "."), "parent": (tmp_path, "sub/"),
                 "repository": (registry.REPO_ROOT, str(folder))}[where]
    done = run(pytest_command("--hero-submission", path, f"--junitxml={os.path.relpath(junit, cwd)}",
                              script=script), cwd, markers=markers)
    _assert_honest(done, junit, markers, folder)
    header = "\n".join(done.stdout.splitlines()[:8])
    assert "autograder/grading_pytest.ini" in header and "/hero-pytest-" in header, header
    assert f"rootdir: {folder}" not in header and f"rootdir: {registry.REPO_ROOT}\n" not in header + "\n", header


def test_the_suites_conftest_marker_is_real(tmp_path):
    """Proof the other way: plain pytest from the repository root imports tests/conftest.py, which
    leaves its marker (cheaply: the samples are generated on first use, not at import)."""
    done = run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--collect-only", "-q",
                "tests/conftest.py"], registry.REPO_ROOT, markers=tmp_path)
    assert (tmp_path / "tests_conftest").read_text(encoding="utf-8") == "imported", done.stdout[-2000:]


@pytest.mark.parametrize("config_file", CONFIG_FILES)
def test_no_ini_file_of_the_submission_is_read(tmp_path, config_file):
    folder, markers = hostile_release(tmp_path, config_files=(config_file,))
    junit = tmp_path / "junit.xml"
    done = run(pytest_command("--hero-submission", ".", f"--junitxml={junit}"), folder, markers=markers)
    _assert_honest(done, junit, markers, folder)


def test_the_pytest_script_and_pythonpath_naming_the_submission(tmp_path):
    """`pytest` (the console script) is guarded too; and were PYTHONPATH to name the submission,
    its sitecustomize, usercustomize or a module another .pth line imports still would not load."""
    folder, markers = hostile_release(tmp_path)
    junit = tmp_path / "junit.xml"
    done = run(pytest_command("--hero-submission", ".", f"--junitxml={junit}", script=True), folder,
               env={"PYTHONPATH": str(folder)}, markers=markers)
    _assert_honest(done, junit, markers, folder)


def test_the_routes_are_real_without_the_guard(tmp_path):
    """Proof the other way: started where the guard does not act (pytest run from `python -c`), the
    submission's pytest.py is what runs; without the shadows, its ini's `-p evil` is imported, and
    the plugin refuses to grade (pytest's usage error) before any conftest.py is read."""
    folder, markers = hostile_release(tmp_path)
    code = ("import runpy, sys; sys.argv = ['pytest', '--hero-submission', '.', '--hero-assignment', 'ch05_block']; "
            "runpy.run_module('pytest', run_name='__main__')")
    run([sys.executable, "-c", code], folder)
    assert (markers / "pytest").exists()  # the shadow ran: this is why the guard acts at start-up
    for marker in markers.iterdir():
        marker.unlink()
    for shadow in ("pytest", "tempfile", "sysconfig", "_distutils_hack"):  # modules pytest imports by name
        (folder / f"{shadow}.py").unlink()
    shutil.rmtree(folder / "_pytest")
    done = run([sys.executable, "-c", code], folder)
    assert done.returncode == 4, done.stdout[-2000:] + done.stderr[-2000:]
    assert "refuses to grade in this process" in done.stderr and "python -m autograder.pytest_guard install" in \
        done.stderr
    loaded = {p.name for p in markers.iterdir()}
    assert "evil" in loaded and "conftest" not in loaded, loaded  # too late for -p; in time for conftest.py
    assert "failed" not in done.stdout and "passed" not in done.stdout


def test_the_plugin_refuses_an_unclean_process(tmp_path):
    """pytest.main() inside another program, or --hero-submission hidden in PYTEST_ADDOPTS: not
    restarted by the guard, so not graded."""
    code = ("import sys, pytest; sys.exit(pytest.main(['-p', 'no:cacheprovider', '--hero-submission', "
            f"{str(RELEASE)!r}, '--hero-assignment', 'ch05_block']))")
    done = run([sys.executable, "-c", code], tmp_path)
    assert done.returncode == 4 and "refuses to grade in this process" in done.stderr, done.stderr[-2000:]
    hidden = run([sys.executable, "-m", "pytest"], tmp_path,
                 env={"PYTEST_ADDOPTS": f"--hero-submission {RELEASE} --hero-assignment ch05_block"})
    assert hidden.returncode == 4 and "refuses to grade in this process" in hidden.stderr, hidden.stderr[-2000:]


def test_the_guard_keeps_pytest_configuration_its_own(tmp_path):
    for option in (["-c", "x.ini"], ["--rootdir", str(tmp_path)], ["--config-file=x.ini"]):
        done = run(pytest_command("--hero-submission", str(RELEASE), *option), tmp_path)
        assert done.returncode == 4 and "chooses pytest's configuration and rootdir itself" in done.stderr, option


def test_without_hero_submission_pytest_is_untouched(tmp_path):
    (tmp_path / "conftest.py").write_text("import pytest\n\n@pytest.fixture\ndef answer():\n    return 42\n",
                                          encoding="utf-8")
    (tmp_path / "test_plain.py").write_text("def test_one(answer):\n    assert answer == 42\n", encoding="utf-8")
    done = run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider"], tmp_path)
    assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout[-2000:]


# --- the guard's reading of command lines ---------------------------------------------------


@pytest.mark.parametrize("argv, expected", [
    (["py", "-m", "pytest", "--hero-submission", "."], ([], "-m", ["--hero-submission", "."])),
    (["py", "-u", "-X", "dev", "-W", "error", "-m", "pytest", "-v"],
     (["-u", "-X", "dev", "-W", "error"], "-m", ["-v"])),
    (["py", "-umpytest", "x"], (["-u"], "-m", ["x"])),
    (["py", "/venv/bin/pytest", "--hero-submission=x"], ([], "/venv/bin/pytest", ["--hero-submission=x"])),
    (["py", "-c", "import pytest", "--hero-submission"], None),
    (["py", "-m", "autograder.cli", "grade", "--hero-submission"], None),
    (["py", "script.py", "--hero-submission", "x"], None),
])
def test_the_guard_recognises_pytest(argv, expected):
    assert pytest_guard._program(argv) == expected


def test_the_guard_makes_paths_absolute_and_nothing_else(tmp_path):
    (tmp_path / "tests").mkdir()
    args = ["--hero-submission", "sub", "-k", "tests", "--junitxml=out/j.xml", "tests", "-p", "no:x",
            "--junit-xml", "k.xml", "--hero-lang", "en", "-o", "x=y", "--", "tests"]
    assert pytest_guard.absolute_arguments(args, str(tmp_path)) == [
        "--hero-submission", f"{tmp_path}/sub", "-k", "tests", f"--junitxml={tmp_path}/out/j.xml", f"{tmp_path}/tests",
        "-p", "no:x", "--junit-xml", f"{tmp_path}/k.xml", "--hero-lang", "en", "-o", "x=y", "--", f"{tmp_path}/tests"]
    assert pytest_guard.wants_grading(["-v", "--hero-submission", "x"])
    assert not pytest_guard.wants_grading(["-v", "--", "--hero-submission", "x"])


def test_the_guard_knows_every_option_of_pytest_that_takes_a_value():
    """A new pytest option with a value must be listed, or its value could be taken for a path."""
    from _pytest.config import get_config

    parser = get_config()._parser.optparser
    known = set(pytest_guard.PATH_OPTIONS + pytest_guard.VALUE_OPTIONS + pytest_guard.OPTIONAL_VALUE_OPTIONS
                + pytest_guard.CHOSEN_BY_THE_GUARD)
    taking_a_value = {name for action in parser._actions if action.nargs != 0 for name in action.option_strings}
    assert taking_a_value - known == set()

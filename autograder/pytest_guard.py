"""The pytest front end's guard: `pytest --hero-submission` always runs in a clean process.

pytest reads configuration and code from where it starts: `python -m pytest` puts the current
folder first on sys.path (a submission's `pytest.py` or `_pytest/` would *be* pytest), and pytest
loads that folder's `conftest.py`, its `pytest.ini`/`tox.ini`/`setup.cfg`/`pyproject.toml` (whose
`addopts` may say `-p evil` and whose `pythonpath` may put the submission on sys.path), all
before any plugin of ours is asked.  So the guard acts earlier: `python -m autograder.pytest_guard
install` (the Makefile's install step) writes a `.pth` file into the environment's site-packages;
Python runs it at start-up, before the main module is looked up, and when the command line is
pytest with `--hero-submission` it re-executes the same command as

    python -I -m pytest -c <autograder/grading_pytest.ini> --rootdir <fresh folder> --noconftest
           -p no:cacheprovider <the arguments, paths made absolute>

from that fresh, empty folder: isolated mode (no current folder, PYTHONPATH or user site on
sys.path), the grader's own ini (no addopts, no pythonpath), no conftest anywhere, no cache
written.  The plugin (autograder/pytest_plugin.py) checks each of these in the process it finds
itself in and refuses to grade (pytest's usage error, exit 4) when one is missing, e.g. where the
guard is not installed.

This file runs from the .pth by its path (not imported by name: nothing on sys.path can stand in
for it), and on that path it imports nothing that Python has not loaded by then (os and sys): were
PYTHONPATH to name a submission, no module of it could stand in for one of ours.  The .pth's name
sorts before every other .pth of the environment, whose lines import modules by name.
"""

import os
import sys

MARKER = "HERO_PYTEST_CLEAN"  # the fresh folder the clean process runs in; set by the guard only
INVOKED_FROM = "HERO_PYTEST_INVOKED_FROM"
PTH_NAME = "00-hero-pytest-guard.pth"  # first of the .pth files, which site reads sorted
OLD_PTH_NAMES = ("hero_pytest_guard.pth",)
GUARD_FILE = os.path.abspath(__file__)
INI_FILE = os.path.join(os.path.dirname(GUARD_FILE), "grading_pytest.ini")
OPTION = "--hero-submission"
# pytest's options whose value is a path (made absolute), and the other options that take a
# value (their value is not a path); tests/test_pytest_isolation.py keeps these lists complete
PATH_OPTIONS = ("--hero-submission", "--junitxml", "--junit-xml", "--basetemp", "--confcutdir", "--log-file")
VALUE_OPTIONS = (
    "-k", "-m", "--maxfail", "-W", "--pythonwarnings", "--max-warnings", "--ignore", "--ignore-glob", "--deselect",
    "--import-mode", "--durations", "--durations-min", "-p", "-o", "--override-ini", "--verbosity", "-r",
    "--report-chars", "--tb", "--show-capture", "--color", "--code-highlight", "--pdbcls", "--capture", "--pastebin",
    "--assert", "--junitprefix", "--junit-prefix", "--doctest-report", "--doctest-glob", "--lfnf",
    "--last-failed-no-failures", "--log-level", "--log-format", "--log-date-format", "--log-cli-level",
    "--log-cli-format", "--log-cli-date-format", "--log-file-mode", "--log-file-level", "--log-file-format",
    "--log-file-date-format", "--log-auto-indent", "--log-disable", "--hero-assignment", "--hero-lang",
    "--hero-timeout",
)
OPTIONAL_VALUE_OPTIONS = ("--debug", "--cache-show")  # a value only as --debug=FILE
CHOSEN_BY_THE_GUARD = ("-c", "--config-file", "--rootdir", "--inifile")
PYTEST_SCRIPTS = ("pytest", "py.test")


def _program(argv):
    """(interpreter options, how pytest was named, its arguments), or None when `argv` does not
    run pytest: `python [opts] -m pytest ARGS` or `python [opts] .../pytest ARGS`."""
    options, index = [], 1
    while index < len(argv):
        word = argv[index]
        if word == "--check-hash-based-pycs":
            options += argv[index:index + 2]
            index += 2
            continue
        if word == "-" or not word.startswith("-"):
            name = os.path.basename(word)
            return (options, word, argv[index + 1:]) if name in PYTEST_SCRIPTS else None
        if word.startswith("--"):
            options.append(word)
            index += 1
            continue
        for position in range(1, len(word)):
            letter = word[position]
            if letter in "cm":
                value = word[position + 1:] or (argv[index + 1] if index + 1 < len(argv) else "")
                rest = argv[index + (1 if word[position + 1:] else 2):]
                if letter == "m" and value in ("pytest", "py.test"):
                    if position > 1:
                        options.append(word[:position])
                    return options, "-m", rest
                return None  # -c CODE, or another module
            if letter in "WX":
                if not word[position + 1:]:
                    options += [word, argv[index + 1]] if index + 1 < len(argv) else [word]
                    index += 1
                else:
                    options.append(word)
                break
        else:
            options.append(word)
        index += 1
    return None


def wants_grading(args):
    """Whether pytest's arguments (before a `--`) ask for grading."""
    before = args[:args.index("--")] if "--" in args else args
    return any(word == OPTION or word.startswith(OPTION + "=") for word in before)


def absolute_arguments(args, invoked_from):
    """pytest's arguments with every path made absolute (from the folder pytest was started in):
    the values of the path options, and free arguments that name an existing path."""
    def absolute(path):
        return os.path.normpath(os.path.join(invoked_from, path))

    out, index = [], 0
    while index < len(args):
        word = args[index]
        if word == "--":
            out += [word] + [absolute(a) if os.path.exists(os.path.join(invoked_from, a)) else a
                             for a in args[index + 1:]]
            break
        option, equals, value = word.partition("=")
        if word.startswith("--") and equals and (option in PATH_OPTIONS or option in OPTIONAL_VALUE_OPTIONS[:1]):
            out.append(f"{option}={absolute(value)}")
        elif word in PATH_OPTIONS and index + 1 < len(args):
            out += [word, absolute(args[index + 1])]
            index += 1
        elif word in VALUE_OPTIONS and index + 1 < len(args):
            out += [word, args[index + 1]]
            index += 1
        elif not word.startswith("-") and os.path.exists(os.path.join(invoked_from, word)):
            out.append(absolute(word))
        else:
            out.append(word)
        index += 1
    return out


def chosen_by_the_guard(args):
    return [word for word in args if word.partition("=")[0] in CHOSEN_BY_THE_GUARD
            or (word.startswith("-c") and not word.startswith("--") and len(word) > 2)]


def clean_command(options, args, invoked_from, folder):
    return [sys.executable, *options, "-I", "-m", "pytest", "-c", INI_FILE, "--rootdir", folder, "--noconftest",
            "-p", "no:cacheprovider", *absolute_arguments(args, invoked_from)]


def _fresh_folder():
    """A new empty folder of this user's (tempfile.mkdtemp without importing tempfile)."""
    base = os.environ.get("TMPDIR") or "/tmp"
    for _ in range(100):
        folder = os.path.join(base, "hero-pytest-" + os.urandom(8).hex())
        try:
            os.mkdir(folder, 0o700)
        except FileExistsError:
            continue
        return os.path.realpath(folder)
    raise FileExistsError(f"no fresh folder could be made in {base}")


def guard():
    """Run from the .pth at interpreter start: re-execute pytest --hero-submission cleanly."""
    found = _program(sys.orig_argv)
    if found is None:
        return
    options, _, args = found
    if not wants_grading(args):
        return
    if sys.flags.isolated and os.environ.get(MARKER):
        return  # the clean process itself
    if not sys.executable:
        return  # nothing to re-execute: the plugin refuses to grade in this process
    refused = chosen_by_the_guard(args)
    if refused:
        sys.stderr.write(f"ERROR: pytest --hero-submission chooses pytest's configuration and rootdir itself "
                         f"(none of the submission's is read); drop {' '.join(refused)}\n")
        sys.stderr.flush()
        os._exit(4)
    invoked_from = os.getcwd()
    folder = _fresh_folder()
    command = clean_command(options, args, invoked_from, folder)
    environ = dict(os.environ, **{MARKER: folder, INVOKED_FROM: invoked_from})
    os.chdir(folder)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, command, environ)


def pth_line():
    """The .pth line: cheap for every other start of Python (one substring test); runs this file
    by its absolute path only when the command line holds --hero-submission."""
    return (f"import sys; (lambda f: (exec(compile(f.read(), {GUARD_FILE!r}, 'exec'), "
            f"{{'__name__': '_hero_pytest_guard', '__file__': {GUARD_FILE!r}}}), f.close()))(open({GUARD_FILE!r})) "
            f"if {OPTION!r} in ' '.join(sys.orig_argv) else None\n")


def pth_path(name=PTH_NAME):
    import sysconfig

    return os.path.join(sysconfig.get_paths()["purelib"], name)


def installed():
    try:
        with open(pth_path(), encoding="utf-8") as pth:
            return pth.read() == pth_line()
    except OSError:
        return False


def install():
    for old in OLD_PTH_NAMES:
        if os.path.exists(pth_path(old)):
            os.remove(pth_path(old))
    path = pth_path()
    with open(path, "w", encoding="utf-8") as pth:
        pth.write(pth_line())
    return path


if __name__ == "_hero_pytest_guard":
    guard()
elif __name__ == "__main__":
    if sys.argv[1:] == ["install"]:
        print(f"the pytest guard is installed: {install()}")
    elif sys.argv[1:] == ["check"]:
        print("installed" if installed() else
              f"not installed ({pth_path()}): python -m autograder.pytest_guard install")
        sys.exit(0 if installed() else 1)
    else:
        sys.exit("usage: python -m autograder.pytest_guard install|check")

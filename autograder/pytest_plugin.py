"""The grader as a pytest suite: `python -m pytest --hero-submission PATH`.

Many instructors' graders are pytest suites.  With this plugin (registered through the
`pytest11` entry point) pytest collects one test per exercise and per answer of the
submission, with node ids such as `ch05_block::layer_norm`, and nothing else.  The verdicts
come from the isolated grader (`engine.grade_many`: sandboxed workers, judged in this process
from data); no student code runs in pytest's process, so a submission cannot patch pytest,
its assertions or its reports.  A failed item's message is the item's feedback;
`--junitxml`, `-k`, `-v` and the exit code work as pytest users expect.  Without
`--hero-submission` the plugin does nothing.

The assignment is the grader's choice: `--hero-assignment` is required, and a folder that also
holds other assignments' notebooks is graded as the one named (its report says the others were
ignored).  pytest's own process never imports student code: the guard (autograder/pytest_guard.py,
installed as a .pth by `make`) restarts pytest cleanly before anything of the submission could be
read, and this plugin refuses to grade (exit 4) in a process the guard did not prepare.
"""

import os
import sys
from pathlib import Path

import pytest

from .pytest_guard import INI_FILE, MARKER


def pytest_addoption(parser):
    group = parser.getgroup("hero", "hero_transformer grader")
    group.addoption("--hero-submission", action="append", default=[], metavar="PATH",
                    help="grade this submission folder (repeatable); collects nothing else")
    group.addoption("--hero-assignment", metavar="ID",
                    help="the assignment every submission is graded as (required with --hero-submission)")
    group.addoption("--hero-lang", choices=("zh", "en"), default="zh", help="feedback language (default zh)")
    group.addoption("--hero-timeout", type=float, default=10.0, metavar="SECONDS",
                    help="seconds of CPU time per exercise (default 10)")


class GradeFailed(Exception):
    """An item that did not earn its points; its text is the feedback."""


class Submission(pytest.Collector):
    def __init__(self, *, report, lang, **kwargs):
        super().__init__(**kwargs)
        self.report, self.lang = report, lang

    def collect(self):
        return [GradedItem.from_parent(self, name=item.id, result=item) for item in self.report.items]


class GradedItem(pytest.Item):
    def __init__(self, *, result, **kwargs):
        super().__init__(**kwargs)
        self.result = result
        self.user_properties += [("points", result.score), ("max_points", result.max_score),
                                 ("status", result.status)]

    def runtest(self):
        if self.result.status != "passed":
            from .report import neutralise

            lang = self.parent.lang
            raise GradeFailed(neutralise(self.result.feedback_zh if lang == "zh" else self.result.feedback_en))

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, GradeFailed):
            from .report import neutralise

            result = self.result
            return neutralise(f"[{result.status}] {result.score:g}/{result.max_score:g}\n{excinfo.value}")
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        return Path(self.parent.report.submission), None, self.nodeid


def unclean(config):
    """Why this process is not the clean one the guard starts (empty when it is)."""
    reasons = []
    folder = os.environ.get(MARKER, "")
    if not sys.flags.isolated:
        reasons.append("Python is not in isolated mode (-I): the folder pytest started in, PYTHONPATH or the user "
                       "site may be on sys.path")
    if not folder or os.path.realpath(os.getcwd()) != os.path.realpath(folder) or \
            os.path.realpath(config.rootpath) != os.path.realpath(folder):
        reasons.append("pytest did not start in the guard's fresh folder")
    if config.inipath is None or os.path.realpath(config.inipath) != os.path.realpath(INI_FILE):
        reasons.append(f"its configuration is {config.inipath or 'none'}, not the grader's {INI_FILE}")
    if not config.known_args_namespace.noconftest:
        reasons.append("conftest.py files are loaded (no --noconftest)")
    if not config.pluginmanager.is_blocked("cacheprovider"):
        reasons.append("the cache plugin writes .pytest_cache")
    return reasons


def _student_modules(paths):
    """Modules of this process loaded from inside a submission folder."""
    roots = [os.path.realpath(path) for path in paths]
    found = []
    for name, module in list(sys.modules.items()):
        try:
            files = [getattr(module, "__file__", None), *list(getattr(module, "__path__", None) or [])]
        except Exception:  # a module object that is not a plain module
            files = [getattr(module, "__file__", None)]
        for file in files:
            if isinstance(file, str) and file and any(
                    os.path.realpath(file).startswith(root + os.sep) for root in roots):
                found.append(name)
                break
    return found


def _refuse(reasons):
    raise pytest.UsageError(
        "pytest --hero-submission refuses to grade in this process: " + "; ".join(reasons) + ". The guard that "
        "starts pytest cleanly did not run: install it with `python -m autograder.pytest_guard install` (`make` "
        "does), then start pytest as `python -m pytest --hero-submission ...` or `pytest --hero-submission ...`.")


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config):
    """The earliest moment an installed plugin is asked, before any conftest.py is read."""
    options = early_config.known_args_namespace
    paths = getattr(options, "hero_submission", None)
    if not paths:
        return
    reasons = unclean(early_config)
    if reasons:
        _refuse(reasons)
    if not getattr(options, "hero_assignment", None):
        raise pytest.UsageError("--hero-submission grades unattended: name the assignment with --hero-assignment ID "
                                "(the grader's choice; a submission's files never choose it)")
    from . import registry, report

    try:
        registry.find_assignment(Path(paths[0]), options.hero_assignment)
    except registry.UnknownAssignment as exc:
        raise pytest.UsageError(f"--hero-assignment: {exc}") from None
    if getattr(options, "xmlpath", None):
        try:
            report.check_output(options.xmlpath, report.protected_roots(paths))
        except report.UnsafeOutput as exc:
            raise pytest.UsageError(f"--junitxml refused: {exc}") from None


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session):
    """In a GitHub job, the runner obeys no workflow command until the session's last line."""
    if session.config.getoption("hero_submission") and os.environ.get("GITHUB_ACTIONS") == "true":
        import secrets

        session.config.stash[_TOKEN] = token = secrets.token_hex(16)
        session.config.get_terminal_writer().line(f"::stop-commands::{token}")


_TOKEN = pytest.StashKey[str]()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_sessionfinish(session):
    try:
        return (yield)  # the terminal's summary is written inside
    finally:
        token = session.config.stash.get(_TOKEN, None)
        if token:
            session.config.get_terminal_writer().line(f"::{token}::")


_REPORTS = pytest.StashKey[list]()


def pytest_terminal_summary(terminalreporter, config):
    """What each report says about the submission itself (refused files, ignored notebooks...)."""
    from .report import neutralise

    reports = config.stash.get(_REPORTS, [])
    problems = [(report.submission, problem) for report in reports for problem in report.problems]
    if problems:
        terminalreporter.section("hero: problems of the submissions")
        for submission, problem in problems:
            terminalreporter.write_line(neutralise(f"{submission}: {problem}"))


def _remove_fresh_folder(folder):
    try:
        os.rmdir(folder)  # the guard's fresh folder, empty: nothing is written there
    except OSError:
        pass


if sys.flags.isolated and os.environ.get(MARKER) and os.path.realpath(os.getcwd()) == \
        os.path.realpath(os.environ[MARKER]):
    import atexit

    # however the clean process ends (a refusal, a usage error, the run), its folder goes with it
    atexit.register(_remove_fresh_folder, os.environ[MARKER])


@pytest.hookimpl(tryfirst=True)
def pytest_collection(session):
    config = session.config
    paths = config.getoption("hero_submission")
    if not paths:
        return None
    reasons = unclean(config)
    loaded = _student_modules(paths)
    if loaded:
        reasons.append(f"modules of a submission are loaded: {', '.join(sorted(loaded)[:10])}")
    if reasons:
        _refuse(reasons)
    from . import engine

    reports = engine.grade_many([Path(p) for p in paths], config.getoption("hero_assignment"),
                                timeout=config.getoption("hero_timeout"))
    config.stash[_REPORTS] = reports
    lang = config.getoption("hero_lang")
    items = []
    for path, report in zip(paths, reports):
        # one submission: ch05_block::<item>; several: ch05_block[<folder>]::<item>
        name = report.assignment if len(paths) == 1 else f"{report.assignment}[{Path(path).name}]"
        collector = Submission.from_parent(session, name=name, nodeid=name, path=Path(path).resolve(),
                                           report=report, lang=lang)
        collected = collector.collect()
        config.hook.pytest_collectreport(report=pytest.CollectReport(collector.nodeid, "passed", None, collected))
        items.extend(collected)
    config.hook.pytest_collection_modifyitems(session=session, config=config, items=items)
    session.items = items
    session.testscollected = len(items)
    config.hook.pytest_collection_finish(session=session)
    return True

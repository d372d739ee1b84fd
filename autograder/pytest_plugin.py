"""The grader as a pytest suite: `python -m pytest --hero-submission PATH`.

Many instructors' graders are pytest suites.  With this plugin (registered through the
`pytest11` entry point) pytest collects one test per exercise and per answer of the
submission, with node ids such as `ch05_block::layer_norm`, and nothing else.  The verdicts
come from the isolated grader (`engine.grade_many`: sandboxed workers, judged in this process
from data); no student code runs in pytest's process, so a submission cannot patch pytest,
its assertions or its reports.  A failed item's message is the item's feedback;
`--junitxml`, `-k`, `-v` and the exit code work as pytest users expect.  Without
`--hero-submission` the plugin does nothing.
"""

from pathlib import Path

import pytest


def pytest_addoption(parser):
    group = parser.getgroup("hero", "hero_transformer grader")
    group.addoption("--hero-submission", action="append", default=[], metavar="PATH",
                    help="grade this submission folder (repeatable); collects nothing else")
    group.addoption("--hero-assignment", metavar="ID", help="assignment id (default: told by the folder)")
    group.addoption("--hero-lang", choices=("zh", "en"), default="zh", help="feedback language (default zh)")
    group.addoption("--hero-timeout", type=float, default=10.0, metavar="SECONDS",
                    help="seconds per exercise (default 10)")


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
            lang = self.parent.lang
            raise GradeFailed(self.result.feedback_zh if lang == "zh" else self.result.feedback_en)

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, GradeFailed):
            return f"[{self.result.status}] {self.result.score:g}/{self.result.max_score:g}\n{excinfo.value}"
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        return Path(self.parent.report.submission), None, self.nodeid


@pytest.hookimpl(tryfirst=True)
def pytest_collection(session):
    config = session.config
    paths = config.getoption("hero_submission")
    if not paths:
        return None
    from . import engine

    reports = engine.grade_many([Path(p) for p in paths], config.getoption("hero_assignment"),
                                timeout=config.getoption("hero_timeout"))
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

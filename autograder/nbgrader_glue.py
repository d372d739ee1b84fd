"""nbgrader integration: grading out of process instead of in the student's kernel.

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
import re
from pathlib import Path

from nbconvert.preprocessors import ClearMetadataPreprocessor
from nbformat.v4 import new_output
from nbgrader.preprocessors import (
    AssignLatePenalties, CheckCellMetadata, IgnorePattern, LimitOutput, NbGraderPreprocessor, SaveAutoGrades,
)
from traitlets import Float

from . import engine
from .sandbox import WorkerPool

HIDDEN_TESTS = re.compile(r"^[ \t]*### BEGIN HIDDEN TESTS\n.*?^[ \t]*### END HIDDEN TESTS\n?", re.S | re.M)
HIDDEN_NOTE = "# （隐藏测试已由评分器在独立进程中运行 / hidden tests ran in the grader's own process）\n"
REPORT_NAME = "hero_report.json"

_pools = {}


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
    timeout = Float(engine.DEFAULT_TIMEOUT, help="seconds allowed per exercise").tag(config=True)

    def preprocess(self, nb, resources):
        folder = Path(resources["metadata"]["path"]).resolve()
        course_root = folder.parents[2]  # <root>/autograded/<student>/<assignment>
        report = engine.grade(folder, resources["nbgrader"]["assignment"], pool=_pool(course_root),
                              timeout=self.timeout)
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


# nbgrader's own pipeline with Execute replaced: scores, late penalties and metadata checks stay nbgrader's
AUTOGRADE_PREPROCESSORS = [
    HeroAutograde, IgnorePattern, ClearMetadataPreprocessor, LimitOutput, SaveAutoGrades, AssignLatePenalties,
    CheckCellMetadata,
]

"""Rendering reports: a terminal table and JSON."""

import json
import textwrap

STATUS_MARK = {"passed": "✓", "failed": "✗", "not_implemented": "·", "error": "!", "timeout": "⏱"}


def _width(text):
    # CJK characters take two terminal columns
    return sum(2 if ord(ch) > 0x2E80 else 1 for ch in text)


def _pad(text, width):
    return text + " " * max(0, width - _width(text))


def _wrapped(text, limit):
    """The feedback's first line, whole, in pieces of at most `limit` columns."""
    line = text.strip().splitlines()[0] if text.strip() else ""
    pieces, current = [], ""
    for word in line.split(" "):
        candidate = f"{current} {word}" if current else word
        if _width(candidate) <= limit:
            current = candidate
            continue
        if current:
            pieces.append(current)
        current = ""
        for ch in word:  # a long word, or Chinese text without spaces: break between characters
            if _width(current + ch) > limit:
                pieces.append(current)
                current = ""
            current += ch
    return pieces + [current] if current or not pieces else pieces


def table(report, lang="zh", feedback_width=72):
    header = [
        f"submission: {report.submission}",
        f"assignment: {report.assignment}   isolation: {report.isolation}   devices checked: {', '.join(report.devices)}",
        f"limits: {report.limits}",
    ]
    rows = [("item", "points", "max", "status", ["feedback"])]
    for item in report.items:  # in the notebook's order
        feedback = item.feedback_zh if lang == "zh" else item.feedback_en
        rows.append((item.id, f"{item.score:g}", f"{item.max_score:g}",
                     f"{STATUS_MARK.get(item.status, '?')} {item.status}", _wrapped(feedback, feedback_width)))
    widths = [max(_width(row[i]) for row in rows) for i in range(4)]
    indent = " " * (sum(widths) + 2 * 4)
    lines = header + [""]
    for index, row in enumerate(rows):
        lines.append("  ".join(_pad(cell, widths[i]) for i, cell in enumerate(row[:4])) + "  " + row[4][0])
        lines.extend(indent + piece for piece in row[4][1:])
        if index == 0:
            lines.append("  ".join("-" * w for w in widths) + "  " + "-" * 8)
    lines.append(f"total: {report.score:g} / {report.max_score:g}")
    for problem in report.problems:
        lines.append(f"problem: {problem}")
    return "\n".join(lines)


def details(report, lang="zh"):
    """Full feedback of every item that lost points."""
    out = []
    for item in report.items:
        if item.status == "passed":
            continue
        feedback = item.feedback_zh if lang == "zh" else item.feedback_en
        out.append(f"[{item.id}] {item.status}")
        out.append(textwrap.indent(feedback.strip(), "    "))
    return "\n".join(out)


def to_json(reports):
    data = [report.to_json() for report in reports]
    return json.dumps(data[0] if len(data) == 1 else data, ensure_ascii=False, indent=2)


# --- machine-readable reports --------------------------------------------------------

def _verdict_line(report, lang="en"):
    """The one-line outcome: it says 'all ... passed' only when every item, hidden checks included, did."""
    lost = [item for item in report.items if item.score < item.max_score]
    score, total = f"{report.score:g}/{report.max_score:g}", len(report.items)
    if lang == "zh":
        if not lost:
            return f"{score}：全部 {total} 个评分项通过（包括隐藏测试）。"
        return f"{score}：{total} 个评分项中有 {len(lost)} 个失分（{'、'.join(item.id for item in lost)}）。"
    if not lost:
        return f"{score}: all {total} graded items passed, hidden checks included."
    return f"{score}: {len(lost)} of {total} graded items lost points ({', '.join(item.id for item in lost)})."


def gradescope(report):
    """Gradescope's results.json: total score and one test per graded item."""
    tests = []
    for item in report.items:
        output = f"{item.feedback_en}\n\n{item.feedback_zh}"
        tests.append({"name": f"{item.id}: {item.title_en}", "score": item.score, "max_score": item.max_score,
                      "output": output, "visibility": "visible", "status": "passed" if item.score == item.max_score
                      else "failed"})
    return {"score": report.score, "max_score": report.max_score, "output": _verdict_line(report)
            + f" Isolation: {report.isolation}; devices checked: {', '.join(report.devices)}.",
            "visibility": "visible", "stdout_visibility": "hidden", "tests": tests}


def junit(reports):
    """JUnit XML: a testsuite per submission, a testcase per graded item."""
    from xml.etree import ElementTree as ET

    suites = ET.Element("testsuites")
    for report in reports:
        lost = [item for item in report.items if item.score < item.max_score]
        suite = ET.SubElement(suites, "testsuite", name=f"{report.assignment}:{report.submission}",
                              tests=str(len(report.items)), failures=str(len(lost)), errors="0")
        properties = ET.SubElement(suite, "properties")
        for name, value in (("score", report.score), ("max_score", report.max_score),
                            ("isolation", report.isolation), ("devices", ",".join(report.devices))):
            ET.SubElement(properties, "property", name=name, value=str(value))
        for item in report.items:
            case = ET.SubElement(suite, "testcase", classname=f"{report.assignment}.{item.kind}", name=item.id)
            if item.score < item.max_score:
                failure = ET.SubElement(case, "failure", message=item.feedback_en.splitlines()[0] if item.feedback_en
                                        else item.status, type=item.status)
                failure.text = f"{item.feedback_en}\n\n{item.feedback_zh}"
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


def _escape_annotation(text):
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _definition_line(path, target):
    """Where the exercise's function starts in the submission's file (parsed, never imported)."""
    import ast

    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return None
    owner, _, name = target.rpartition(".")
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == owner:
            for child in node.body:
                if isinstance(child, ast.FunctionDef) and child.name == name:
                    return child.lineno
        if not owner and isinstance(node, ast.FunctionDef) and node.name == name and node.col_offset == 0:
            return node.lineno
    return None


def github(report, relative_to=None, targets=None, lang="en"):
    """(markdown job summary, annotation lines): one `::error` per item that lost points.
    `targets` maps an exercise id to its (module, qualified name), where the annotation points."""
    from pathlib import Path

    folder = Path(report.submission)
    shown = folder.relative_to(relative_to) if relative_to and folder.is_relative_to(relative_to) else folder
    lines = [f"### {report.assignment}: {report.score:g} / {report.max_score:g}", "",
             _verdict_line(report, lang), "",
             (f"隔离方式：`{report.isolation}` · 检查过的设备：{', '.join(report.devices)}" if lang == "zh" else
              f"Isolation: `{report.isolation}` · devices checked: {', '.join(report.devices)}"), "",
             "| 评分项 | 得分 | 满分 | 状态 | 反馈 |" if lang == "zh" else "| item | points | max | status | feedback |",
             "|---|---:|---:|---|---|"]
    annotations = []
    for item in report.items:
        text = item.feedback_zh if lang == "zh" else item.feedback_en
        feedback = text.splitlines()[0] if text else ""
        lines.append(f"| `{item.id}` | {item.score:g} | {item.max_score:g} | {item.status} | "
                     f"{feedback.replace('|', '/')} |")
        if item.score < item.max_score:
            module, target = (targets or {}).get(item.id, (None, None))
            source = Path("hero_transformer") / f"{module}.py"
            line = _definition_line(folder / source, target) if target else None
            where = f"file={shown / source},line={line}," if line else \
                f"file={shown / (report.assignment + '.ipynb')},"
            title = f"{item.id}: {item.score:g}/{item.max_score:g} ({item.status})"
            annotations.append(f"::error {where}title={title}::{_escape_annotation(text)}")
    return "\n".join(lines) + "\n", annotations

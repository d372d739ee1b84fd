"""Rendering reports: a terminal table and JSON."""

import json
import textwrap

STATUS_MARK = {"passed": "✓", "failed": "✗", "not_implemented": "·", "error": "!", "timeout": "⏱"}


def _width(text):
    # CJK characters take two terminal columns
    return sum(2 if ord(ch) > 0x2E80 else 1 for ch in text)


def _pad(text, width):
    return text + " " * max(0, width - _width(text))


def _first_line(text, limit):
    line = text.strip().splitlines()[0] if text.strip() else ""
    out = ""
    for ch in line:
        if _width(out + ch) > limit - 1:
            return out + "…"
        out += ch
    return out


def table(report, lang="zh", feedback_width=72):
    header = [
        f"submission: {report.submission}",
        f"assignment: {report.assignment}   isolation: {report.isolation}   devices checked: {', '.join(report.devices)}",
        f"limits: {report.limits}",
    ]
    rows = [("exercise", "points", "max", "status", "feedback")]
    for item in report.items:
        feedback = item.feedback_zh if lang == "zh" else item.feedback_en
        rows.append((item.id, f"{item.score:g}", f"{item.max_score:g}",
                     f"{STATUS_MARK.get(item.status, '?')} {item.status}", _first_line(feedback, feedback_width)))
    widths = [max(_width(row[i]) for row in rows) for i in range(4)]
    lines = header + [""]
    for index, row in enumerate(rows):
        lines.append("  ".join(_pad(cell, widths[i]) for i, cell in enumerate(row[:4])) + "  " + row[4])
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

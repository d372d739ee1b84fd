"""Rendering reports: a terminal table and JSON, and the files CI and course platforms read.

Student text (feedback quoting an error message or a print, a file name in a problem) reaches
terminals and CI logs.  A CI runner obeys a log line that starts, after any whitespace, with a
workflow command (GitHub's `::notice ...::`, `::stop-commands::`, `::add-mask::`, `##[...]`,
Azure's `##vso[`), so every text printed here goes through `neutralise`, and `ci_quiet` wraps a
whole run's output between `::stop-commands::<random token>` and `::<token>::` in a GitHub job.
Report files are opened by `open_output`: never through a symbolic link."""

import html
import json
import os
import re
import secrets
import stat
import sys
import textwrap
from contextlib import contextmanager

STATUS_MARK = {"passed": "✓", "failed": "✗", "not_implemented": "·", "error": "!", "timeout": "⏱"}


# a line starts where the runner (and any reader) may split one: \n, \r, the other controls that
# end a line, NEL and the Unicode separators; then whitespace, then `::`, GitHub's commands
_LINE_START = re.compile("(\\A|[\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029])(\\s*?)::")
# the older forms are found anywhere in a line: GitHub's `##[command]`, Azure's `##vso[`
_ANYWHERE = re.compile(r"##(\[|vso\[)", re.IGNORECASE)


def neutralise(text):
    """`text` with no workflow command left in it: `::` at the start of a line (after any
    whitespace) becomes `: :`, and `##[` / `##vso[` anywhere become `# #[` / `# #vso[`, so that no
    CI runner takes any of it as a command.  Readers still see what was written."""
    text = _ANYWHERE.sub(lambda m: "# #" + m.group(1), text)
    while True:
        changed = _LINE_START.sub(lambda m: m.group(1) + m.group(2) + ": :", text)
        if changed == text:
            return text
        text = changed


# C0/C1 controls (escape sequences can rewrite a terminal line, e.g. fake a total), the line and
# paragraph separators (a line break to some readers and not to others), and the bidirectional
# overrides that reorder what a reader sees; newlines and tabs stay
_UNPRINTABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def printable(text):
    """Student text (feedback, prints, file and folder names) as every front end may show it: no
    control characters, and no line a CI runner would take as a workflow command."""
    return neutralise(_UNPRINTABLE.sub("\ufffd", str(text)))


def markdown_table_text(text):
    """One line of plain text for a cell of a Markdown table that a browser will render (a CI job
    summary): no HTML, no link or image syntax, no table break, no workflow command."""
    line = " ".join(neutralise(str(text)).split()).replace("|", "/")
    line = re.sub(r"([\\`*_\[\]()!#~:])", r"\\\1", line)  # no emphasis, code, link, image or autolink
    return html.escape(line, quote=False)  # no tag: <, > and & as entities


def looks_like_a_command(line):
    """Whether a runner would take this output line as (or as holding) a workflow command."""
    return line.lstrip().startswith("::") or bool(_ANYWHERE.search(line))


@contextmanager
def ci_quiet(out=None, environ=None, enabled=True):
    """In a GitHub job ($GITHUB_ACTIONS=true), the output inside is between
    `::stop-commands::<token>` and `::<token>::`: the runner obeys no workflow command in it, even
    one that neutralising missed.  Yields a list: lines (our own commands, e.g. annotations)
    printed after the runner listens again.  (Not for JSON output, which stays plain JSON: no
    line of it starts with anything but whitespace, a quote or a bracket.)"""
    out = out or sys.stdout
    environ = os.environ if environ is None else environ
    after = []
    if environ.get("GITHUB_ACTIONS") != "true" or not enabled:
        yield after
        for line in after:
            print(line, file=out)
        return
    token = secrets.token_hex(16)  # the sandbox never sees it, so no student text can hold it
    print(f"::stop-commands::{token}", file=out, flush=True)
    try:
        yield after
    finally:
        sys.stderr.flush()
        print(f"::{token}::", file=out, flush=True)
        for line in after:
            print(line, file=out)
        out.flush()


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
    return neutralise("\n".join(lines))


def details(report, lang="zh"):
    """Full feedback of every item that lost points."""
    out = []
    for item in report.items:
        if item.status == "passed":
            continue
        feedback = item.feedback_zh if lang == "zh" else item.feedback_en
        out.append(f"[{item.id}] {item.status}")
        out.append(textwrap.indent(feedback.strip(), "    "))
    return neutralise("\n".join(out))


def to_json(reports):
    data = [report.to_json() for report in reports]
    text = json.dumps(data[0] if len(data) == 1 else data, ensure_ascii=False, indent=2)
    # JSON leaves U+2028/U+2029 raw; escaped, no reader splits a line inside a string.  No line of it
    # starts with student text, but `##[` and Azure's `##vso[` act anywhere in a line: neutralised
    return neutralise(text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


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
        output = neutralise(f"{item.feedback_en}\n\n{item.feedback_zh}")
        tests.append({"name": f"{item.id}: {item.title_en}", "score": item.score, "max_score": item.max_score,
                      "output": output, "visibility": "visible", "status": "passed" if item.score == item.max_score
                      else "failed"})
    # the verdict in Chinese (the students' language), then in English
    return {"score": report.score, "max_score": report.max_score, "output": _verdict_line(report, "zh") + "\n"
            + _verdict_line(report) + f" Isolation: {report.isolation}; devices checked: {', '.join(report.devices)}.",
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
                failure = ET.SubElement(case, "failure", message=neutralise(item.feedback_en.splitlines()[0])
                                        if item.feedback_en else item.status, type=item.status)
                failure.text = neutralise(f"{item.feedback_en}\n\n{item.feedback_zh}")
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


def _escape_annotation(text):
    # the toolkit's escapes, and every other line break as %0A: an annotation is one line anywhere
    return re.sub("[\x0b\x0c\x1c-\x1e\x85\u2028\u2029]", "%0A",
                  text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def _escape_property(text):
    """A value of an annotation's property (file=, title=), escaped as the runner's toolkit does."""
    return _escape_annotation(text).replace(":", "%3A").replace(",", "%2C")


MAX_SOURCE_BYTES = 1_000_000  # as the engine reads a package file


def _definition_line(folder, relpath, target):
    """Where the exercise's function starts in the submission's file: read through safefiles (no
    link followed, regular files only, size checked), parsed, never imported."""
    import ast

    from . import safefiles

    try:
        with safefiles.Folder(folder) as opened:
            text = opened.read(relpath, MAX_SOURCE_BYTES).decode("utf-8")
        tree = ast.parse(text)
    except (OSError, safefiles.Refused, SyntaxError, ValueError, RecursionError, MemoryError):
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

    from .registry import PACKAGE

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
                     f"{markdown_table_text(feedback)} |")
        if item.score < item.max_score:
            module, target = (targets or {}).get(item.id, (None, None))
            source = f"{PACKAGE}/{module}.py"
            line = _definition_line(folder, source, target) if target else None
            where = f"file={_escape_property(str(shown / source))},line={line}," if line else \
                f"file={_escape_property(str(shown / (report.assignment + '.ipynb')))},"
            title = _escape_property(f"{item.id}: {item.score:g}/{item.max_score:g} ({item.status})")
            # its message is one line for the runner; split at any line break, no part is a command
            annotations.append(f"::error {where}title={title}::{_escape_annotation(neutralise(text))}")
    return neutralise("\n".join(lines)) + "\n", annotations


# --- report files: never through a link -------------------------------------------------

# CI workspaces: what a job checked out (the student's repository) lies there
WORKSPACE_VARIABLES = ("GITHUB_WORKSPACE", "CI_PROJECT_DIR", "BUILD_SOURCESDIRECTORY", "WORKSPACE")


class UnsafeOutput(Exception):
    """A report path that would be written through a link, or is not a regular file."""


def protected_roots(submissions=(), environ=None):
    """Folders whose insides a student may have shaped: the submissions and the CI workspace."""
    environ = os.environ if environ is None else environ
    roots = [str(path) for path in submissions]
    roots += [environ[name] for name in WORKSPACE_VARIABLES if environ.get(name)]
    found = set()
    for root in roots:
        found.add(os.path.abspath(root))
        found.add(os.path.realpath(root))
    return sorted(found)


def _strictly_inside(path, roots):
    return any(path != root and path.startswith(root.rstrip(os.sep) + os.sep) for root in roots)


def _walk_to_parent(path, roots, make):
    """(descriptor of the folder that holds `path`, its last component), reached one component at
    a time from /: inside a protected root no component may be a link (O_NOFOLLOW); outside, the
    machine's own links (/tmp, /var/run...) are followed.  `make` creates missing folders."""
    target = os.path.abspath(path)
    parts = [part for part in target.split(os.sep) if part]
    if not parts:
        raise UnsafeOutput(f"{path} is not a file path")
    fd = os.open("/", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    here = ""
    try:
        for part in parts[:-1]:
            here = f"{here}/{part}"
            strict = _strictly_inside(here, roots)
            try:
                info = os.stat(part, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                if not make:
                    return None, parts[-1]
                os.mkdir(part, 0o777, dir_fd=fd)  # mkdirat: never through a link
                info = os.stat(part, dir_fd=fd, follow_symlinks=False)
            if stat.S_ISLNK(info.st_mode) and strict:
                raise UnsafeOutput(f"{here} is a symbolic link inside a submission or the CI workspace; "
                                   f"report files are never written through a link")
            flags = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC | (os.O_NOFOLLOW if strict else 0)
            try:
                inner = os.open(part, flags, dir_fd=fd)
            except OSError as exc:
                raise UnsafeOutput(f"{here} cannot be used as a folder for a report ({exc.strerror})") from None
            os.close(fd)
            fd = inner
    except BaseException:
        os.close(fd)
        raise
    return fd, parts[-1]


def check_output(path, roots):
    """Refuse, before any grading, a report path that could only be written through a link or
    into something that is not a regular file; nothing is created."""
    fd, name = _walk_to_parent(path, roots, make=False)
    if fd is None:
        return
    try:
        info = os.stat(name, dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        return
    finally:
        os.close(fd)
    if not stat.S_ISREG(info.st_mode):
        from .safefiles import kind_of

        raise UnsafeOutput(f"{path} is {kind_of(info.st_mode)}; a report is written only to a regular file")


def open_output(path, roots, append=False):
    """A text file to write a report into: its folders made (never through a link inside `roots`),
    the file itself opened with O_NOFOLLOW and only if it is (or becomes) a regular file."""
    fd, name = _walk_to_parent(path, roots, make=True)
    try:
        flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | (os.O_APPEND if append else 0)
        try:
            out = os.open(name, flags, 0o666, dir_fd=fd)
        except OSError as exc:  # ELOOP: a link; ENXIO: a FIFO nobody reads
            raise UnsafeOutput(f"{path} cannot be opened as a regular file ({exc.strerror}); "
                               f"report files are never written through a link") from None
    finally:
        os.close(fd)
    info = os.fstat(out)
    if not stat.S_ISREG(info.st_mode):
        os.close(out)
        from .safefiles import kind_of

        raise UnsafeOutput(f"{path} is {kind_of(info.st_mode)}; a report is written only to a regular file")
    os.set_blocking(out, True)
    if not append:
        os.ftruncate(out, 0)
    return os.fdopen(out, "a" if append else "w", encoding="utf-8")

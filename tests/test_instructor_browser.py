"""No student-written HTML or script runs where a person looks: in the instructor's formgrader
(served by the instructor's own Jupyter server, with the instructor's session) and in the
feedback page.  A hostile submission (autograder/hostile.py's html-notebook recipe: every vector,
each payload calling formgrader's API to rewrite grades) is graded with two honest ones through
nbgrader, then opened in Chromium as the instructor would open it; the tests listen for dialogs,
console messages, page errors and every request, and compare with an honest submission's page.

The first tests need no browser: they prove the sanitiser (autograder/sanitise.py) both ways,
every vector removed and honest markdown kept."""

import base64
import html.parser
import json
import re
import shutil
import sqlite3
import subprocess
import sys

import nbformat
import pytest

from autograder import hostile, registry, release, sanitise

from conftest import CHAPTER, SAMPLES
from test_browser import _why_not, browser, lab  # noqa: F401 (the fixtures are used by name)

ASSIGNMENT = CHAPTER
NOTEBOOK = ASSIGNMENT.notebook_name
ATTEMPTS = {attempt.id: attempt for attempt in ASSIGNMENT.hostile()}
HOSTILE = ("html_notebook", "html_in_feedback")  # both in one submission
# mallory and eve: the hostile submission; eve's autograded notebook is then put back as she
# submitted it, as if graded before the sanitiser existed: formgrader's own cleaning must hold alone
STUDENTS = {"mallory": None, "eve": None, "alice": "reference", "bob": "post_ln"}
HOSTILE_STUDENTS = ("mallory", "eve")
FAULT_LOSES = "block"  # what post_ln loses (its fault's exercise)
needs_browser = pytest.mark.skipif(_why_not() is not None, reason=str(_why_not()))
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00"
                       b"\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\xcf\xc0\xf0\x1f\x00\x05\x00\x01\xff\x89\x99=\x1d"
                       b"\x00\x00\x00\x00IEND\xaeB`\x82").decode()


def build_hostile(dest, samples):
    """The hostile submission: the html-notebook recipe, plus the answer whose error message is HTML."""
    values = {"repo": registry.REPO_ROOT, "course": dest, "home": dest, "marker": dest / "marker",
              "secret_name": "HERO_GRADER_SECRET", "port": 9, "victim": "victim-secret-"}
    hostile.build(ASSIGNMENT, ATTEMPTS["html_notebook"], dest, samples, **values)
    other = ATTEMPTS["html_in_feedback"]
    wrong = ASSIGNMENT.part("hostile").WRONG_ANSWER[other.target]
    release.replace_answers(dest / NOTEBOOK, {other.target: wrong + "\n" + other.code.format(notebook=NOTEBOOK,
                                                                                             **values)})
    return dest


# --- what a page may hold ----------------------------------------------------------------

class _Elements(html.parser.HTMLParser):
    """Every start tag with its attributes, and the text of every script and style element."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.code, self._open = [], [], None

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._open = tag if tag in ("script", "style") else None

    def handle_data(self, data):
        if self._open:
            self.code.append(data)

    def handle_endtag(self, tag):
        self._open = None


_LIVE_TAGS = {"script", "iframe", "frame", "object", "embed", "applet", "form", "input", "button", "select",
              "textarea", "svg", "link", "base", "meta", "style", "video", "audio", "source", "foreignobject"}
_URL_ATTRIBUTES = {"href", "src", "action", "formaction", "data", "xlink:href", "srcdoc", "poster", "background"}


def live_markup(fragment, allowed=()):
    """What in an HTML fragment could run or fetch: live tags, event handlers, URLs other than
    https/http/mailto links, fragments and raster data: images, styles that fetch."""
    parser = _Elements()
    parser.feed(fragment)
    found = [f"<{tag}>" for tag, _ in parser.tags if tag in _LIVE_TAGS - set(allowed)]
    for tag, attrs in parser.tags:
        for name, value in attrs.items():
            value = value or ""
            bare = re.sub(r"[\x00-\x20]", "", value).lower()
            if name.startswith("on"):
                found.append(f"<{tag} {name}>")
            elif name in _URL_ATTRIBUTES and not (
                    (name == "href" and re.match(r"^(https?:|mailto:|#)", bare))
                    or (name == "src" and tag == "img" and re.match(r"^data:image/(png|jpeg|gif|webp);base64,", bare))):
                found.append(f"<{tag} {name}={value[:60]}>")
            elif name == "style" and re.search(r"url\(|expression|@import|position", bare):
                found.append(f"<{tag} style={value[:60]}>")
    found += [f"code: {code[:60]}" for code in parser.code if hostile.XSS_MARK in code or hostile.XSS_HOST in code]
    return found


def hostile_notebook(tmp_path):
    folder = build_hostile(tmp_path / "hostile", SAMPLES)
    return nbformat.read(str(folder / NOTEBOOK), as_version=4)


# --- the sanitiser, both ways (no browser) -------------------------------------------------

def test_every_vector_is_in_the_hostile_notebook(tmp_path):
    """The recipe really writes each vector of the catalogue where it says."""
    notebook = hostile_notebook(tmp_path)
    text = json.dumps(notebook)
    for vector, (where, payload) in hostile.html_vectors(ASSIGNMENT.id, ASSIGNMENT.id).items():
        assert f"hostile {vector}" in text or where in ("raw", "raw-html", "metadata"), vector
    assert "widgets" in notebook.metadata and any(cell.get("attachments") for cell in notebook.cells)
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
    assert {mime for o in outputs for mime in o.get("data", {})} >= {
        "text/html", "application/javascript", "image/svg+xml", "text/markdown", "text/latex",
        "application/vnd.jupyter.widget-view+json"}


@pytest.mark.parametrize("mathml", [False, True], ids=["tex", "mathml"])
def test_the_sanitiser_removes_every_vector(tmp_path, mathml):
    notebook = sanitise.sanitise_notebook(hostile_notebook(tmp_path), mathml=mathml)
    assert set(notebook.metadata) <= {"kernelspec", "language_info"}  # no widgets, no title
    allowed_mimes = {"text/plain", "text/latex", "text/html", "text/markdown", "image/png", "image/jpeg", "image/gif"}
    for index, cell in enumerate(notebook.cells):
        assert "attachments" not in cell
        assert set(cell.metadata) <= {"nbgrader", "tags", "deletable", "editable", "raw_mimetype"}
        assert all(hostile.XSS_MARK not in tag for tag in cell.metadata.get("tags", []))
        if cell.cell_type == "markdown":
            assert sanitise.is_sanitised(cell.source), index
            assert live_markup(cell.source) == [], (index, cell.source[:300])
        elif cell.cell_type == "raw":
            assert live_markup(cell.source) == [], (index, cell.source[:300])
        else:
            for output in cell.outputs:
                assert set(output.get("data", {})) <= allowed_mimes, output
                assert not output.get("metadata", {}).get("text/html")  # no "isolated" iframe
                for mime in ("text/html", "text/markdown"):
                    assert live_markup(output.get("data", {}).get(mime, "")) == [], output
    # and rendered by nbconvert's own page (classic: raw HTML and outputs pass through as they are)
    from nbconvert import HTMLExporter

    page, _ = HTMLExporter(template_name="classic").from_notebook_node(notebook)
    body = page[page.index("<body"):]
    assert live_markup(body, allowed={"style", "script"}) == []  # the template's own style and scripts
    assert hostile.XSS_HOST not in re.sub(r"&[a-z]+;", "", "".join(re.findall(r"<[^>]+>", body)))


def test_the_sanitiser_is_idempotent_and_keeps_mathml_only_where_asked(tmp_path):
    once = sanitise.sanitise_notebook(hostile_notebook(tmp_path))
    sources = [cell.source for cell in once.cells]
    twice = sanitise.sanitise_notebook(once)
    assert [cell.source for cell in twice.cells] == sources
    assert sanitise.safe_markdown("<math><mi>x</mi></math> $y$", mathml=False).count("<math") == 0
    assert sanitise.safe_markdown("$y$", mathml=True).count("<math") == 1


HONEST = f"""# Heading one

## A table and a list

| item | value |
|:-----|------:|
| $d$  | 4     |

1. first **bold** and *italic*, `code`
2. second ~~old~~

Inline $\\mu = \\frac{{1}}{{d}}\\sum_i x_i$ and display

$$\\sigma^2 = \\frac{{1}}{{d}}\\sum_i (x_i - \\mu)^2$$

![a pixel](data:image/png;base64,{PNG})

<img src="data:image/jpeg;base64,{PNG}" alt="raw img" width="10">

[the paper](https://arxiv.org/abs/1706.03762), [mail](mailto:ta@example.org), [back up](#heading-one)

<sub>small</sub> <span style="color: red">red</span>

```python
def f(x):
    return x < 1
```
"""


def test_honest_markdown_survives():
    out = sanitise.safe_markdown(HONEST)
    assert live_markup(out) == []
    for kept in ('<h1 id="student-Heading-one">Heading one', "<h2", "<table>", '<th style="text-align: left">item',
                 "<ol>", "<strong>bold</strong>", "<em>italic</em>", "<code>code</code>", "<del>old</del>",
                 '<span class="hero-math">$\\mu = \\frac{1}{d}\\sum_i x_i$</span>',
                 '<span class="hero-math hero-math-display">$$\\sigma^2',
                 f'<img src="data:image/png;base64,{PNG}" alt="a pixel">', f'src="data:image/jpeg;base64,{PNG}"',
                 'alt="raw img"', 'width="10"', '<a href="https://arxiv.org/abs/1706.03762"',
                 '<a href="mailto:ta@example.org"', "<sub>small</sub>", '<span style="color: red">red</span>',
                 '<div class="highlight"><pre>', '<span class="k">def</span>', "&lt;"):
        assert kept in out, kept
    # the page's markdown renderer passes it through whole, and it reads the same
    from nbconvert.filters.markdown_mistune import markdown2html_mistune

    assert markdown2html_mistune(out).strip() == out
    # the feedback's MathML: the formulas drawn, none left as TeX
    mathml = sanitise.safe_markdown(out, mathml=True)
    assert mathml.count("<math") == 3 and "\\frac" not in mathml and "<mfrac>" in mathml
    assert live_markup(mathml) == []


def test_grade_ids_and_comments_are_checked_too():
    """What nbgrader's templates print raw: a grade id (in id= attributes) and a comment (markdown)."""
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("answer", metadata={"nbgrader": {
            "grade": True, "solution": True, "grade_id": "q1", "points": 1,
            "comment": '<img src=x onerror="alert(1)"> **well done**'}}),
        nbformat.v4.new_markdown_cell("forged", metadata={"nbgrader": {
            "grade": True, "solution": True, "grade_id": '"><img src=x onerror=alert(1)>', "points": 1}})])
    sanitise.sanitise_notebook(notebook)
    comment = notebook.cells[0].metadata.nbgrader.comment
    assert sanitise.is_sanitised(comment) and "<strong>well done</strong>" in comment and "onerror" not in comment
    assert "nbgrader" not in notebook.cells[1].metadata


def test_a_ci_summary_cell_holds_no_markup():
    from autograder.report import markdown_table_text

    cell = markdown_table_text("![x](http://hero-xss.invalid/a) <img src=x> | [l](javascript:a)\nnext")
    assert "<" not in cell and "|" not in cell and "](" not in cell and "\n" not in cell


# --- the real thing: nbgrader, formgrader and the feedback page in Chromium -----------------

@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A course root with ch05_block generated, the hostile submission and two honest ones
    autograded, their feedback generated, and what the gradebook held before anyone looked."""
    root = tmp_path_factory.mktemp("instructor-course")
    shutil.copytree(registry.COURSE_DIR, root / registry.SOURCE_DIR)
    shutil.copy(registry.REPO_ROOT / "nbgrader_config.py", root)

    def nbgrader(*args):
        done = subprocess.run([sys.executable, "-m", "nbgrader", *args, "--force"], cwd=root, capture_output=True,
                              text=True)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]

    nbgrader("generate_assignment", ASSIGNMENT.id)
    for student, sample in STUDENTS.items():
        dest = root / "submitted" / student / ASSIGNMENT.id
        dest.parent.mkdir(parents=True)
        build_hostile(dest, SAMPLES) if sample is None else shutil.copytree(SAMPLES / sample, dest)
    nbgrader("autograde", ASSIGNMENT.id)
    nbgrader("generate_feedback", ASSIGNMENT.id)
    autograded = root / "autograded" / "eve" / ASSIGNMENT.id / NOTEBOOK
    autograded.chmod(0o644)  # nbgrader leaves it read-only
    shutil.copy(root / "submitted" / "eve" / ASSIGNMENT.id / NOTEBOOK, autograded)
    return root


def _rows(root):
    """{student: {grade cell: (auto, manual, extra credit)}}, read without writing."""
    with sqlite3.connect(f"file:{root / 'gradebook.db'}?mode=ro", uri=True) as db:
        rows = db.execute(
            "SELECT sa.student_id, bc.name, g.auto_score, g.manual_score, g.extra_credit FROM grade g "
            "JOIN submitted_notebook sn ON g.notebook_id = sn.id "
            "JOIN submitted_assignment sa ON sn.assignment_id = sa.id "
            "JOIN base_cell bc ON g.cell_id = bc.id").fetchall()
    found = {}
    for student, cell, auto, manual, extra in rows:
        found.setdefault(student, {})[cell] = (auto, manual, extra)
    return found


def _submission_ids(root):
    with sqlite3.connect(f"file:{root / 'gradebook.db'}?mode=ro", uri=True) as db:
        return dict(db.execute("SELECT sa.student_id, sn.id FROM submitted_notebook sn "
                               "JOIN submitted_assignment sa ON sn.assignment_id = sa.id").fetchall())


@pytest.fixture(scope="module")
def graded(course):
    """The gradebook's bytes and rows before the instructor's server starts, the submission ids."""
    return {"bytes": (course / "gradebook.db").read_bytes(), "rows": _rows(course), "ids": _submission_ids(course)}


def test_nbgrader_grades_the_batch_as_it_should(course, graded):
    points = ASSIGNMENT.points()
    scores = {student: {cell: auto for cell, (auto, _, _) in cells.items()}
              for student, cells in graded["rows"].items()}
    assert scores["alice"] == points  # the reference: full marks
    assert scores["bob"] == {item: 0 if item == FAULT_LOSES else value for item, value in points.items()}
    targets = {ATTEMPTS[a].target for a in HOSTILE}  # the hostile ones: their two wrong answers and nothing else
    for student in HOSTILE_STUDENTS:
        assert scores[student] == {item: 0 if item in targets else value for item, value in points.items()}
    assert all(extra is None for cells in graded["rows"].values() for _, _, extra in cells.values())


# formgrader's page needs MathJax from its CDN (formgrade.js calls MathJax.Hub when it starts);
# this machine has no network, so the tests serve this stand-in at MathJax's address: it signals
# the end of typesetting at once, as MathJax does when there is nothing left to typeset
MATHJAX_STANDIN = ("window.MathJax = {Hub: {Startup: {signal: {Interest: function (f) {"
                   "setTimeout(function () { f('End'); }, 0); }}}, Queue: function () {}, Config: function () {}}};")


class Watch:
    """Everything a page does that a person did not ask for."""

    def __init__(self, context, base=None):
        self.dialogs, self.console, self.errors, self.requests = [], [], [], []
        self.base = base
        context.on("request", lambda request: self.requests.append((request.method, request.url)))
        context.on("page", self._page)
        # nothing leaves this machine: only the instructor's server and local files are served
        context.route(re.compile(r"^https?://"), self._route)

    def _route(self, route):
        url = route.request.url
        if self.base and url.startswith(self.base):
            route.continue_()
        elif url.startswith(sanitise.MATHJAX_URL.split("?")[0]):
            route.fulfill(status=200, content_type="application/javascript", body=MATHJAX_STANDIN)
        else:
            route.abort()

    def _page(self, page):
        page.on("dialog", lambda dialog: (self.dialogs.append(dialog.message), dialog.dismiss()))
        page.on("console", lambda message: self.console.append(f"{message.type}: {message.text}"))
        page.on("pageerror", lambda error: self.errors.append(str(error)))

    def marked(self):
        return [url for _, url in self.requests if hostile.XSS_HOST in url or "hero-xss" in url]

    def csp_violations(self):
        return [line for line in self.console if "Content Security Policy" in line or "Refused to" in line]


def _normalised(requests, base, ids):
    found = set()
    for method, url in requests:
        if not url.startswith(base):
            found.add((method, re.sub(r"\?.*", "", url)))
            continue
        path = url[len(base):]
        for value in ids:
            path = path.replace(value, "{id}")
        found.add((method, re.sub(r"[0-9a-f]{32}", "{id}", path)))
    return found


def _open(browser, url, base=None, token=None, settle_ms=3000):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    watch = Watch(context, base)
    page = context.new_page()
    page.set_default_timeout(60_000)
    if token:
        # log in first on a page whose login cookie is for the whole server: formgrader's own pages
        # set it for their folder only (nbgrader strips the base URL's slash), so their API calls
        # would be sent without it
        page.goto(f"{base}/api/status?token={token}")
        watch.requests.clear()
    page.goto(url)
    page.wait_for_load_state("load")
    page.wait_for_timeout(settle_ms)  # onfocus, animations, fetches, refreshes: time to fire
    return context, page, watch


def _student_markup(page):
    """The notebook part of the page, as HTML: what the student's notebook became."""
    return page.locator("#notebook-container").first.inner_html()


@needs_browser
def test_formgrader_shows_the_hostile_submission_and_runs_none_of_it(course, graded, lab, browser):
    base, token = lab
    ids = graded["ids"]
    pages = {}
    for student in ("alice", *HOSTILE_STUDENTS):
        context, page, watch = _open(browser, f"{base}/formgrader/submissions/{ids[student]}/", base, token)
        # formgrader's own scripts ran under the page's policy: the scores came from its API
        page.wait_for_function("() => document.querySelectorAll('input.score').length > 0 && "
                               "[...document.querySelectorAll('input.score')].every(i => i.placeholder !== '')")
        markup = _student_markup(page)
        pages[student] = {"watch": watch, "title": page.title(), "markup": markup,
                          "inputs": page.locator("#notebook-container input, #notebook-container textarea").count(),
                          "policy": page.locator("meta[http-equiv='Content-Security-Policy']").get_attribute("content")}
        page.screenshot(path=str(registry.REPO_ROOT / "build" / "screenshots" / f"formgrader-{student}.png"))
        context.close()
    honest = pages["alice"]
    assert honest["watch"].csp_violations() == [], honest["watch"].console  # formgrader works under the policy
    assert honest["watch"].errors == [], honest["watch"].errors
    for student in HOSTILE_STUDENTS:
        shown, watch = pages[student], pages[student]["watch"]
        policy = shown["policy"]
        assert "'nonce-" in policy and "'strict-dynamic'" in policy and "unsafe" not in policy.split("style-src")[0]
        assert watch.errors == [], (student, watch.errors)
        assert watch.dialogs == [], (student, watch.dialogs)
        assert watch.marked() == [], (student, watch.marked())
        assert shown["title"] == honest["title"] == ASSIGNMENT.notebook_name.removesuffix(".ipynb")
        # no request the honest page's own code does not make, and no write through formgrader's API
        extra = _normalised(watch.requests, base, ids.values()) - _normalised(honest["watch"].requests, base,
                                                                                ids.values())
        assert extra == set(), (student, extra)
        assert not [r for r in watch.requests if r[0] != "GET"], (student, watch.requests)
        assert watch.csp_violations() == [], (student, watch.csp_violations())  # nothing was left to block
        # the student's part of the page holds nothing live (formgrader's own score and comment boxes aside)
        assert shown["inputs"] == honest["inputs"], student
        assert live_markup(shown["markup"], allowed={"input", "textarea", "button"}) == [], student
        assert "hostile img-onerror" in shown["markup"] and "hero-student-html" in shown["markup"], student
    assert _rows(course) == graded["rows"] and (course / "gradebook.db").read_bytes() == graded["bytes"]


@needs_browser
def test_formgrader_lists_the_submissions_and_runs_none_of_them(course, graded, lab, browser):
    base, token = lab
    context, page, watch = _open(browser, f"{base}/formgrader/gradebook/{ASSIGNMENT.id}/{ASSIGNMENT.id}", base,
                                 token)
    page.get_by_text(f"Submission #{len(STUDENTS)}", exact=False).first.wait_for(timeout=60_000)
    assert page.locator("tbody tr").count() == len(STUDENTS)
    context.close()
    assert watch.dialogs == [] and watch.marked() == [] and watch.errors == []
    assert not [r for r in watch.requests if r[0] != "GET"]


@needs_browser
def test_nothing_in_the_gradebook_changed(course, graded, lab, browser):
    """After both formgrader tests: not a byte of the gradebook, the honest students' rows as graded."""
    assert _rows(course) == graded["rows"]
    assert (course / "gradebook.db").read_bytes() == graded["bytes"]


@needs_browser
def test_the_feedback_page_runs_nothing(course, browser):
    feedback = course / "feedback" / "mallory" / ASSIGNMENT.id / f"{ASSIGNMENT.id}.html"
    text = feedback.read_text(encoding="utf-8")
    head = text[text.index("<head"):text.index("</head>")]
    assert head.index('http-equiv="Content-Security-Policy"') < min(head.index("<style"), head.index("<title"))
    assert sanitise.FEEDBACK_CSP in head
    context, page, watch = _open(browser, feedback.as_uri())
    title = page.title()
    scripts = page.evaluate("() => document.scripts.length")
    formulas = page.locator("math").count()
    markup = page.locator("#notebook-container").first.inner_html()
    context.close()
    assert watch.dialogs == [] and watch.marked() == [] and watch.errors == []
    assert all(url.startswith(("file:", "data:")) for _, url in watch.requests), watch.requests
    assert scripts == 0 and title == ASSIGNMENT.id
    assert formulas > 50  # the chapter's math, drawn as MathML
    assert live_markup(markup) == [], live_markup(markup)
    assert "HERO-XSS:feedback-value" in page_text(text)  # the error message is there, as text


def page_text(text):
    return re.sub(r"<[^>]+>", "", text).replace("&lt;", "<").replace("&gt;", ">")


@needs_browser
def test_the_payloads_are_real_without_the_sanitiser(tmp_path, browser):
    """Proof the other way: nbconvert's own page of the hostile notebook, unsanitised, runs them
    (dialogs, the title, requests to the marker host), so the tests above would see them."""
    from nbconvert import HTMLExporter

    page_html, _ = HTMLExporter(template_name="classic").from_notebook_node(
        _without_missing_attachment(hostile_notebook(tmp_path)))
    path = tmp_path / "unsanitised.html"
    path.write_text(page_html, encoding="utf-8")
    context, page, watch = _open(browser, path.as_uri())
    title = page.title()
    context.close()
    fired = {message.split(":", 1)[1] for message in watch.dialogs if message.startswith(hostile.XSS_MARK)}
    assert {"img-onerror", "svg-onload", "details-ontoggle", "script", "output-html", "output-markdown"} <= fired, fired
    assert len(fired) >= 10, fired
    assert title == hostile.XSS_MARK
    assert any("/style-attribute" in url or "/md-image" in url for url in watch.marked()), watch.marked()


def _without_missing_attachment(notebook):
    # nbconvert stops the whole page at a reference to a missing attachment (a vector of its own)
    for cell in notebook.cells:
        if cell.cell_type == "markdown" and "attachment:missing.png" in cell.source:
            cell.source = "hostile attachment-missing (left out here)"
    return notebook

"""A student's and an instructor's day in a real browser: JupyterLab 4 with the nbgrader
extension, driven by Playwright in Debian's Chromium (`make test` installs it as root).

The server runs in a fresh course root with a PATH that holds no `.venv/bin`, as when someone
starts `.venv/bin/jupyter lab` without activating anything.  Screenshots are kept under
build/screenshots/ as the run's artifacts."""

import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from autograder import registry

from conftest import CHAPTER, SAMPLES

SCREENSHOTS = registry.REPO_ROOT / "build" / "screenshots"
FIRST = min(registry.ASSIGNMENTS.values(), key=lambda assignment: assignment.chapter)  # where the course starts
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def _why_not():
    if CHROMIUM is None:
        return "Chromium is not installed here (`make test` installs it with apt-get when run as root)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright is not installed (it is a dependency in pyproject.toml)"
    return None


pytestmark = pytest.mark.skipif(_why_not() is not None, reason=str(_why_not()))


def _free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A course root like the repository: course/, nbgrader_config.py, the release, a student's
    `hero start` copy, and one autograded submission with its feedback."""
    root = tmp_path_factory.mktemp("browser-course")
    shutil.copytree(registry.COURSE_DIR, root / registry.SOURCE_DIR)
    shutil.copy(registry.REPO_ROOT / "nbgrader_config.py", root)
    shutil.copytree(registry.REPO_ROOT / registry.RELEASE_DIR, root / registry.RELEASE_DIR)
    for assignment_id in (FIRST.id, CHAPTER.id):
        done = subprocess.run([sys.executable, "-m", "autograder.cli", "start", assignment_id], cwd=root,
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    shutil.copytree(SAMPLES / "post_ln", root / "submitted" / "post_ln" / CHAPTER.id)
    for step in (("generate_assignment", CHAPTER.id, "--force"), ("release_assignment", CHAPTER.id, "--force"),
                 ("autograde", CHAPTER.id, "--force"), ("generate_feedback", CHAPTER.id, "--force")):
        done = subprocess.run([sys.executable, "-m", "nbgrader", *step], cwd=root, capture_output=True, text=True)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return root


# JupyterLab settings for the test browser only: every cell in the page (JupyterLab 4 renders
# only the visible ones by default, so a locator could not reach the last check), no news prompt
LAB_SETTINGS = {
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": '{"windowingMode": "none"}',
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": '{"fetchNews": "false"}',
}


@pytest.fixture(scope="module")
def lab(course, tmp_path_factory):
    """JupyterLab serving the course root; yields its base URL and token."""
    port, token = _free_port(), secrets.token_hex(16)
    settings = tmp_path_factory.mktemp("lab-settings")
    for relpath, text in LAB_SETTINGS.items():
        (settings / relpath).parent.mkdir(parents=True, exist_ok=True)
        (settings / relpath).write_text(text, encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if key not in ("VIRTUAL_ENV",)}
    env["PATH"] = "/usr/local/bin:/usr/bin:/bin"  # no .venv/bin: alembic must be found all the same
    env["JUPYTERLAB_SETTINGS_DIR"] = str(settings)
    env["JUPYTERLAB_WORKSPACES_DIR"] = str(tmp_path_factory.mktemp("lab-workspaces"))  # no tabs from earlier runs
    log = open(course / "jupyter.log", "w")
    server = subprocess.Popen([sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}",
                               f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={course}",
                               "--allow-root"], cwd=course, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    for _ in range(120):
        try:
            urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2)
            break
        except OSError:
            time.sleep(0.5)
    else:
        server.kill()
        pytest.fail("JupyterLab did not start:\n" + (course / "jupyter.log").read_text()[-3000:])
    yield base, token
    server.terminate()
    try:
        server.wait(timeout=20)
    except subprocess.TimeoutExpired:
        server.kill()
    log.close()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(60_000)
    yield page
    context.close()


def _cell(page, text):
    """The notebook cell whose source holds `text`."""
    return page.locator(".jp-Notebook .jp-Cell").filter(has=page.locator(".cm-content", has_text=text)).first


def _run_cell(page, cell):
    cell.locator(".cm-content").click()
    page.keyboard.press("Shift+Enter")


def _wait_idle(page):
    page.wait_for_function("() => !document.body.innerText.includes('[*]:')", timeout=180_000)


def test_a_student_opens_the_chapter_runs_it_fills_a_stub_and_an_answer_and_validates(lab, course, page):
    base, token = lab
    page.goto(f"{base}/lab/tree/work/{CHAPTER.id}/{CHAPTER.notebook_name}?token={token}")
    page.wait_for_selector(".jp-Notebook .jp-Cell")
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator, .jp-Toolbar", timeout=60_000)
    # Run All goes to the end: stubs and unanswered cells say so in one line, never stop the run
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_text("Run All Cells", exact=True).click()
    last_check = _cell(page, "checks.check_ledger()")
    last_check.locator(".jp-OutputArea-output").wait_for(timeout=180_000)
    _wait_idle(page)
    assert "尚未实现：练习 parameter_count" in last_check.inner_text()
    gelu_check = _cell(page, "checks.check_gelu()")
    assert "尚未实现：练习 gelu" in gelu_check.inner_text()
    assert "Traceback" not in gelu_check.inner_text()
    gelu_check.scroll_into_view_if_needed()
    page.screenshot(path=str(SCREENSHOTS / "student-run-all.png"))

    # fill the gelu stub on disk and one answer in the page, without restarting the kernel
    model = course / "work" / CHAPTER.id / registry.PACKAGE / "model.py"
    text = model.read_text(encoding="utf-8")
    stub = re.search(r"\n([ \t]*)# 练习 gelu：.*\n[ \t]*raise NotImplementedError\('gelu'\)\n", text)
    assert stub, "the gelu stub is not where the release puts it"
    indent = stub.group(1)
    model.write_text(text.replace(stub.group(0), f"\n{indent}return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))\n"),
                     encoding="utf-8")
    answer = _cell(page, "increment_gap = ...")
    answer.locator(".cm-content").click()
    page.keyboard.press("Control+a")
    page.keyboard.insert_text("z = standardise([1.0, 1.004])\n"
                              "increment_gap = 0.5 * gelu_exact(z[1]) - 0.5 * gelu_exact(z[0])")
    page.keyboard.press("Shift+Enter")  # the answer cell
    page.keyboard.press("Shift+Enter")  # its visible check
    _run_cell(page, gelu_check)
    _wait_idle(page)
    page.wait_for_function("""() => [...document.querySelectorAll('.jp-Cell')].some(cell =>
        cell.innerText.includes('checks.check_gelu()') && cell.innerText.includes('可见检查通过'))""")
    answer_check = _cell(page, 'checks.answered("increment_gap"')
    assert "尚未作答" not in answer_check.inner_text() and "Error" not in answer_check.inner_text()
    gelu_check.scroll_into_view_if_needed()
    page.screenshot(path=str(SCREENSHOTS / "student-visible-check-passes.png"))

    # nbgrader's Validate runs on the saved notebook and lists what is not done yet
    page.keyboard.press("Control+s")
    page.get_by_role("button", name="Validate").click()
    dialog = page.locator(".jp-Dialog")
    # Validate executes the whole chapter: under the CI-plus-lab-grid load of a 2-core machine it
    # has taken over 180 s (twice), so this waits for the outcome, not for a speed
    dialog.get_by_text("Validation Results").wait_for(timeout=600_000)
    report = dialog.inner_text()
    assert "尚未作答" in report and "尚未实现：练习 block" in report
    assert 'checks.answered("increment_gap"' not in report and "checks.check_gelu()" not in report
    page.screenshot(path=str(SCREENSHOTS / "student-validate.png"))


def test_a_student_starts_the_course_at_chapter_one_and_run_all_reaches_the_end(lab, page):
    """The first chapter's release, untouched: Run All ends without a traceback, every exercise
    says in one line that it is not done yet, and the corpus cell waits for them politely."""
    base, token = lab
    page.goto(f"{base}/lab/tree/work/{FIRST.id}/{FIRST.notebook_name}?token={token}")
    page.locator(".jp-Notebook:visible .jp-Cell").first.wait_for()  # the other chapter's tab may be open too
    # the workspace restores the other chapter's tab, which may be the current one for a moment:
    # make this notebook current, so that the status bar and Run All are its own
    page.locator(".lm-TabBar-tab", has_text=FIRST.notebook_name).first.click()
    page.locator(".jp-Notebook:visible .jp-Cell").first.click()
    # Run All before the kernel is up does nothing: wait for the status bar's "Idle"
    page.wait_for_function("() => /\\(ipykernel\\) \\| Idle/.test(document.body.innerText)", timeout=120_000)
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_text("Run All Cells", exact=True).click()
    # every code cell of this notebook has run: each prompt holds an execution count
    page.wait_for_function("""() => {
        const notebook = [...document.querySelectorAll('.jp-Notebook')].find(n => n.offsetParent !== null);
        const prompts = [...notebook.querySelectorAll('.jp-CodeCell .jp-InputPrompt')].map(p => p.innerText.trim());
        return prompts.length > 0 && prompts.every(p => /^\\[\\d+\\]:$/.test(p));
    }""", timeout=240_000)
    text = page.locator(".jp-Notebook:visible").inner_text()  # the lab may restore other open tabs
    assert "Traceback" not in text  # an exception in any cell shows one
    for exercise in FIRST.exercises:
        assert f"尚未实现：练习 {exercise.id}" in text, exercise.id
    page.screenshot(path=str(SCREENSHOTS / "student-chapter-one-run-all.png"), full_page=True)


def test_the_assignment_list_and_course_list_work(lab, page):
    base, token = lab
    page.goto(f"{base}/lab?token={token}")
    page.wait_for_selector(".jp-LabShell")
    for panel in ("Assignment List", "Course List"):
        page.get_by_role("menuitem", name="Nbgrader", exact=True).click()
        page.get_by_text(panel, exact=True).click()
        page.wait_for_timeout(3000)
        assert "Error" not in page.locator(".lm-DockPanel").inner_text(), panel
    page.get_by_role("tab", name="Assignments").click() if page.get_by_role("tab", name="Assignments").count() else None
    page.screenshot(path=str(SCREENSHOTS / "assignment-and-course-lists.png"))
    assert "hero_transformer" in page.locator(".lm-DockPanel").inner_text()  # the course, from the exchange


def test_formgrader_loads(lab, course, page):
    base, token = lab
    page.goto(f"{base}/formgrader?token={token}")
    page.get_by_role("link", name=CHAPTER.id).wait_for(timeout=90_000)  # the assignments table has loaded
    assert "Loading" not in page.inner_text("body")
    page.screenshot(path=str(SCREENSHOTS / "formgrader.png"))
    log = (course / "jupyter.log").read_text(encoding="utf-8")
    assert "FileNotFoundError" not in log and "Traceback" not in log, log[-3000:]  # alembic was found


def test_feedback_shows_rendered_math_with_the_network_blocked(course, browser):
    feedback = course / "feedback" / "post_ln" / CHAPTER.id / f"{CHAPTER.id}.html"
    assert "<script src=\"http" not in feedback.read_text(encoding="utf-8")  # nothing to fetch
    context = browser.new_context(offline=True, viewport={"width": 1200, "height": 900})
    page = context.new_page()
    requests = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(feedback.as_uri())
    formulas = page.locator("math")
    assert formulas.count() > 50
    formula = formulas.nth(10)
    formula.scroll_into_view_if_needed()
    box = formula.bounding_box()
    assert box and box["width"] > 5 and box["height"] > 5  # drawn, not an empty tag
    body = page.inner_text("body")
    assert "\\varepsilon" not in body and "\\frac" not in body  # no raw LaTeX left
    assert "Test cell" not in body and "block" in page.inner_text("#toc")
    assert all(url.startswith("file:") or url.startswith("data:") for url in requests), requests
    page.locator("a[name='block']").scroll_into_view_if_needed()  # post_ln's lost item and its feedback
    page.screenshot(path=str(SCREENSHOTS / "feedback-math-offline.png"))
    context.close()


def _open_chapter_and_run_all(lab, page):
    """The student's chapter notebook, current and with its kernel idle, after Run All (the stubs and
    the unanswered cells say so in one line; the walkthrough's helpers are then defined)."""
    base, token = lab
    page.goto(f"{base}/lab/tree/work/{CHAPTER.id}/{CHAPTER.notebook_name}?token={token}")
    page.locator(".jp-Notebook:visible .jp-Cell").first.wait_for()
    page.locator(".lm-TabBar-tab", has_text=CHAPTER.notebook_name).first.click()  # the workspace may restore others
    page.locator(".jp-Notebook:visible .jp-Cell").first.click()
    page.wait_for_function("() => /\\(ipykernel\\) \\| Idle/.test(document.body.innerText)", timeout=120_000)
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_text("Run All Cells", exact=True).click()
    _cell(page, "checks.check_ledger()").locator(".jp-OutputArea-output").wait_for(timeout=180_000)
    _wait_idle(page)


def test_a_failing_visible_check_shows_its_message_and_the_students_line_without_internals(lab, course, page):
    _open_chapter_and_run_all(lab, page)
    model = course / "work" / CHAPTER.id / registry.PACKAGE / "model.py"
    original = model.read_text(encoding="utf-8")
    stub = re.search(r"\n([ \t]*)# 练习 layer_norm：.*\n[ \t]*raise NotImplementedError\('layer_norm'\)\n", original)
    assert stub, "the layer_norm stub is not where the release puts it"
    # centred but never divided by the standard deviation: a wrong result, not an error of Python's
    model.write_text(original.replace(stub.group(0), f"\n{stub.group(1)}return x - x.mean(dim=-1, keepdim=True)\n"),
                     encoding="utf-8")
    try:
        check = _cell(page, "checks.check_layer_norm()")
        _run_cell(page, check)
        _wait_idle(page)
        page.wait_for_function("""() => [...document.querySelectorAll('.jp-Cell')].some(cell =>
            cell.innerText.includes('checks.check_layer_norm()') && cell.innerText.includes('可见检查未通过'))""")
        output = check.locator(".jp-OutputArea").inner_text()
        lines = [line for line in output.splitlines() if line.strip()]
        assert lines[0].startswith("✗ 可见检查未通过：") and "方差" in lines[0], output  # the check's own words
        assert [line.strip().startswith("→ hero_transformer/model.py:") for line in lines].count(True) == 1, output
        assert "def forward(self, x):" in output  # the exercise's own line, as the student wrote it
        assert len(lines) == 4, output  # the message, its English, the student's line, the switch
        assert "Traceback" not in output and "checks.py" not in output and "_raise_if" not in output, output
        # still an error output: the cell failed (Run All stops there, Validate lists it)
        assert check.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']").count() == 1
        check.scroll_into_view_if_needed()
        page.screenshot(path=str(SCREENSHOTS / "student-visible-check-fails.png"))
    finally:
        model.write_text(original, encoding="utf-8")


def test_a_passing_answer_check_says_so_in_one_line(lab, page):
    _open_chapter_and_run_all(lab, page)
    answer = _cell(page, "normalised_variance = ...")
    answer.locator(".cm-content").click()
    page.keyboard.press("Control+a")
    page.keyboard.insert_text("normalised_variance = population_variance(standardise([0.0, 0.006]))")
    page.keyboard.press("Shift+Enter")  # the answer cell
    page.keyboard.press("Shift+Enter")  # its form check
    _wait_idle(page)
    check = _cell(page, 'checks.answered("normalised_variance"')
    page.wait_for_function("""() => [...document.querySelectorAll('.jp-Cell')].some(cell =>
        cell.innerText.includes('checks.answered("normalised_variance"') && cell.innerText.includes('形式正确'))""")
    output = check.locator(".jp-OutputArea").inner_text().strip()
    assert output == ("✓ normalised_variance：形式正确（数值由隐藏测试核对）  (normalised_variance: the form is right; "
                      "the hidden tests check the value)"), output
    check.scroll_into_view_if_needed()
    page.screenshot(path=str(SCREENSHOTS / "student-answer-form-check-passes.png"))

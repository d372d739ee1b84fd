"""A class's day on a real JupyterHub, on this machine only.

The test starts JupyterHub (LocalProcessSpawner, DummyAuthenticator with one shared password,
configurable-http-proxy from `make hub-proxy`) on 127.0.0.1 and free ports, with three system
users it creates: an instructor (hero-hub-teacher) and two students (hero-hub-s1, hero-hub-s2),
each with a fresh home (0700) in a temporary folder, and nbgrader's exchange shared between them
(a 1777 folder there).  The instructor's course root is a copy of the course (course/ and
nbgrader_config.py, as benchmarks/grading_speed.py builds one) whose nbgrader_config.py points
Exchange.root at the shared exchange; each student's ~/.jupyter/nbgrader_config.py names the course
and the same exchange.

The day: the instructor generates and releases ch05_block; student s1 logs into the hub in
Chromium, fetches the chapter from JupyterLab's Assignment List, writes the reference submission
into it and submits it from the Assignment List; s2 fetches and submits a faulty one (tanh GELU)
with the nbgrader CLI; the instructor collects, autogrades, generates and releases feedback; s1
fetches feedback from the Assignment List and s2 with the CLI.  Each gets their own page with their
own scores (s1 full marks, s2 all but the gelu exercise) and can read neither the other's page nor
the exchange's list of feedback.  However it ends, the hub, every single-user server and the proxy
are stopped, the users deleted and the folder removed.

Run it alone, with its progress lines:  .venv/bin/python -m pytest tests/test_hub.py -s
It needs root (it creates users and runs processes as them), Chromium (`make browser`) and the
proxy (`make hub-proxy`); otherwise it skips and says why.
"""

import os
import pwd
import re
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

from autograder import registry, release

ASSIGNMENT = registry.ASSIGNMENTS["ch05_block"]
COURSE = "hero_transformer"
TEACHER, S1, S2 = "hero-hub-teacher", "hero-hub-s1", "hero-hub-s2"
USERS = (TEACHER, S1, S2)
FAULT = "tanh_gelu"  # s2's submission: the reference with this catalogue entry's gelu
VENV_BIN = Path(sys.executable).parent
PROXY = registry.REPO_ROOT / "build" / "node" / "node_modules" / ".bin" / "configurable-http-proxy"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
SCREENSHOTS = registry.REPO_ROOT / "build" / "screenshots"
START = time.monotonic()


def _blocking_folders():
    """Folders on the way to the repository or the Python environment that other users may not
    pass (/root, where pyenv keeps the interpreter .venv links to, say)."""
    needed = {registry.REPO_ROOT, Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve()}
    return sorted({str(folder) for path in needed for folder in [path, *path.parents]
                   if not folder.stat().st_mode & stat.S_IXOTH})


def _why_not():
    if os.geteuid() != 0:
        return "needs root: it creates the hub's system users and runs their servers as them"
    if CHROMIUM is None:
        return "Chromium is not installed here (`make browser` installs it with apt-get as root)"
    if not PROXY.exists():
        return f"configurable-http-proxy is not installed in {PROXY.parents[2]} (`make hub-proxy` installs it with npm)"
    if shutil.which("setpriv") is None:
        return "setpriv (util-linux) is missing: root cannot run the users' commands as them"
    if shutil.which("node") is None:
        return "node is not installed: configurable-http-proxy runs on it"
    for module in ("jupyterhub", "playwright.sync_api", "psutil"):
        try:
            __import__(module)
        except ImportError:
            return f"{module} is not installed (a dependency in pyproject.toml)"
    if _blocking_folders() and shutil.which("bwrap") is None:
        return (f"{', '.join(_blocking_folders())} may not be passed by other users and bwrap is missing to bind "
                f"the Python environment in for them (`make sandbox` installs it)")
    return None


def reachable_prefix():
    """A command prefix under which the repository and the Python environment are reachable by any
    user, without changing a permission on this machine: where a folder on the way may not be passed
    by others, it is replaced by an empty one in a mount namespace of that command (and of everything
    it starts) with just those paths bound back in, as tests/test_hostile.py runs its batch."""
    blocking = _blocking_folders()
    if not blocking:
        return []
    needed = sorted({str(registry.REPO_ROOT), str(Path(sys.prefix).resolve()), str(Path(sys.base_prefix).resolve())})
    argv, covered = ["bwrap", "--dev-bind", "/", "/"], set()
    for folder in map(Path, blocking):
        if any(folder.is_relative_to(done) for done in covered):
            continue
        covered.add(folder)
        argv += ["--perms", "0755", "--tmpfs", str(folder)]
        for inner in map(Path, needed):
            if inner.is_relative_to(folder) and inner != folder:
                argv += [arg for step in reversed(inner.parents) if step.is_relative_to(folder) and step != folder
                         for arg in ("--perms", "0755", "--dir", str(step))]
                argv += ["--ro-bind", str(inner), str(inner)]
    return argv + ["--"]


pytestmark = pytest.mark.skipif(_why_not() is not None, reason=str(_why_not()))


def say(message):
    print(f"[hub {time.monotonic() - START:6.1f}s] {message}", flush=True)


def _free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _uid(user):
    return pwd.getpwnam(user).pw_uid


def as_user(user, *argv, cwd=None, check=True):
    """Run argv as `user` (their uid, group and no other groups), with a login-like environment."""
    entry = pwd.getpwnam(user)
    env = {"HOME": entry.pw_dir, "USER": user, "LOGNAME": user, "LANG": "C.UTF-8",
           "PATH": f"{VENV_BIN}:/usr/local/bin:/usr/bin:/bin"}
    switch = ["setpriv", f"--reuid={entry.pw_uid}", f"--regid={entry.pw_gid}", "--clear-groups",
              "--inh-caps=-all", "--bounding-set=-all"]
    done = subprocess.run([*reachable_prefix(), *switch, *map(str, argv)], cwd=cwd or entry.pw_dir, env=env,
                          capture_output=True, text=True)
    if check:
        assert done.returncode == 0, f"{user}: {' '.join(map(str, argv))}\n{done.stdout[-3000:]}\n{done.stderr[-4000:]}"
    return done


def nbgrader(user, *args, cwd=None):
    return as_user(user, str(VENV_BIN / "nbgrader"), *args, cwd=cwd)


def _chown_tree(path, user):
    entry = pwd.getpwnam(user)
    for folder, dirs, files in os.walk(path):
        os.chown(folder, entry.pw_uid, entry.pw_gid)
        for name in files:
            os.chown(os.path.join(folder, name), entry.pw_uid, entry.pw_gid)


def _write_sample(folder, entry=None):
    """The reference submission (entry None) or the one with a catalogue entry's body, over a
    fetched folder: the answered notebook and the package (as autograder/samples.py writes them)."""
    release_nb = registry.REPO_ROOT / registry.RELEASE_DIR / ASSIGNMENT.id / ASSIGNMENT.notebook_name
    solution_nb = registry.REPO_ROOT / registry.SOLUTION_DIR / ASSIGNMENT.id / ASSIGNMENT.notebook_name
    release.write_files(folder, release.sample_package(ASSIGNMENT.chapter, entry))
    (folder / ASSIGNMENT.notebook_name).write_text(release.answered_notebook(release_nb, solution_nb), encoding="utf-8")


def _ensure_user(user, home):
    try:
        pwd.getpwnam(user)
        subprocess.run(["usermod", "--home", str(home), user], check=True)  # left by an interrupted run
    except KeyError:
        subprocess.run(["useradd", "--system", "--user-group", "--no-create-home", "--home-dir", str(home),
                        "--shell", "/usr/sbin/nologin", user], check=True)
    home.mkdir(parents=True)
    entry = pwd.getpwnam(user)
    os.chown(home, entry.pw_uid, entry.pw_gid)
    os.chmod(home, 0o700)


def _session_of(process):
    try:
        return os.getsid(process.pid)
    except OSError:
        return None


def _stop_everything(hub, proxy_pid_file):
    """The hub (which stops the single-user servers and the proxy it started), then anything left:
    every process of the three users and the proxy named in its pid file."""
    import psutil

    if hub is not None:
        # the hub and, where reachable_prefix is bwrap, bwrap: a session of their own (the proxy and
        # the single-user servers have theirs); SIGTERM lets the hub stop those first
        def session():
            hub.poll()  # reaps bwrap or the hub, the test's own child
            return [p for p in psutil.process_iter(["status"])
                    if _session_of(p) == hub.pid and p.info["status"] != psutil.STATUS_ZOMBIE]
        # the hub itself, not bwrap: bwrap then reaps it and exits (a signalled bwrap would leave
        # the hub to init, a zombie until init reaps it)
        members = session()
        for process in [p for p in members if p.pid != hub.pid] or members:
            try:
                process.send_signal(signal.SIGTERM)
            except psutil.Error:
                pass
        deadline = time.monotonic() + 60
        while session() and time.monotonic() < deadline:
            time.sleep(0.5)
        for process in session():
            process.kill()
        try:
            hub.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
    leftovers = []
    uids = set()
    for user in USERS:
        try:
            uids.add(_uid(user))
        except KeyError:
            pass
    for process in psutil.process_iter(["uids", "status"]):
        try:
            if process.info["uids"] and process.info["uids"].real in uids and \
                    process.info["status"] != psutil.STATUS_ZOMBIE:
                leftovers.append(process)
        except psutil.Error:
            pass
    try:
        proxy = psutil.Process(int(proxy_pid_file.read_text().strip()))
        if "configurable-http-proxy" in " ".join(proxy.cmdline()):
            leftovers.append(proxy)
    except (OSError, ValueError, psutil.Error):
        pass
    for process in leftovers:
        try:
            process.kill()
        except psutil.Error:
            pass
    psutil.wait_procs(leftovers, timeout=10)
    return leftovers


HUB_CONFIG = """\
c = get_config()  # noqa: F821
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = {port}
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = {hub_port}
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{api_port}"
c.ConfigurableHTTPProxy.command = [{proxy!r}]
c.ConfigurableHTTPProxy.pid_file = {pid_file!r}
c.JupyterHub.db_url = "sqlite:///{folder}/jupyterhub.sqlite"
c.JupyterHub.cookie_secret_file = "{folder}/jupyterhub_cookie_secret"
c.JupyterHub.authenticator_class = "dummy"
c.DummyAuthenticator.password = {password!r}
c.Authenticator.allowed_users = {users!r}
c.JupyterHub.spawner_class = "localprocess"
c.Spawner.cmd = [{singleuser!r}]
c.Spawner.default_url = "/lab"
c.Spawner.environment = {{"PATH": {path!r}, "LANG": "C.UTF-8"}}
c.Spawner.start_timeout = 240
c.Spawner.http_timeout = 240
"""


@pytest.fixture(scope="module")
def hub():
    base = Path(tempfile.mkdtemp(prefix="hero-hub-"))
    os.chmod(base, 0o755)
    homes = base / "home"
    homes.mkdir()
    os.chmod(homes, 0o755)
    exchange = base / "exchange"
    exchange.mkdir()
    os.chmod(exchange, 0o1777)  # nbgrader's shared exchange: everyone writes, the sticky bit
    folder = base / "hub"
    folder.mkdir(mode=0o700)
    pid_file = folder / "proxy.pid"
    process = log = None
    try:
        for user in USERS:
            _ensure_user(user, homes / user)
        say(f"users {', '.join(USERS)} with homes in {homes}; exchange {exchange}")
        # the instructor's course root: the course's sources and configuration, the shared exchange
        course = homes / TEACHER / "course"
        shutil.copytree(registry.COURSE_DIR, course / registry.SOURCE_DIR)
        shutil.copy(registry.REPO_ROOT / "nbgrader_config.py", course)
        with open(course / "nbgrader_config.py", "a", encoding="utf-8") as config:
            config.write(f"\n# on the hub: the exchange shared by the instructor and the students\n"
                         f"c.Exchange.root = {str(exchange)!r}\n")
        _chown_tree(course, TEACHER)
        for student in (S1, S2):
            config = homes / student / ".jupyter" / "nbgrader_config.py"
            config.parent.mkdir()
            config.write_text(f"c = get_config()  # noqa: F821\nc.CourseDirectory.course_id = {COURSE!r}\n"
                              f"c.Exchange.root = {str(exchange)!r}\n", encoding="utf-8")
            _chown_tree(config.parent, student)
        as_user(S2, str(VENV_BIN / "python"), "-c", "import nbgrader, jupyterhub, autograder")  # the venv is theirs too

        port, password = _free_port(), secrets.token_urlsafe(12)
        (folder / "jupyterhub_config.py").write_text(HUB_CONFIG.format(
            port=port, hub_port=_free_port(), api_port=_free_port(), proxy=str(PROXY), pid_file=str(pid_file),
            folder=folder, password=password, users=set(USERS), singleuser=str(VENV_BIN / "jupyterhub-singleuser"),
            path=f"{VENV_BIN}:/usr/local/bin:/usr/bin:/bin"), encoding="utf-8")
        log = open(base / "jupyterhub.log", "w")
        env = {key: value for key, value in os.environ.items() if key not in ("VIRTUAL_ENV",)}
        env["PATH"] = f"{VENV_BIN}:/usr/local/bin:/usr/bin:/bin"
        env.pop("CONFIGPROXY_AUTH_TOKEN", None)
        process = subprocess.Popen([*reachable_prefix(), str(VENV_BIN / "jupyterhub"), "-f",
                                    str(folder / "jupyterhub_config.py")],
                                   cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        url = f"http://127.0.0.1:{port}"
        for _ in range(240):
            if process.poll() is not None:
                break
            try:
                urllib.request.urlopen(f"{url}/hub/api/", timeout=2)
                break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail("JupyterHub did not answer in 120 s:\n" + (base / "jupyterhub.log").read_text()[-4000:])
        if process.poll() is not None:
            pytest.fail("JupyterHub exited:\n" + (base / "jupyterhub.log").read_text()[-4000:])
        say(f"JupyterHub up at {url} (proxy {PROXY.name}, LocalProcessSpawner)")
        yield dict(url=url, password=password, exchange=exchange, course=course, homes=homes, log=base / "jupyterhub.log")
    finally:
        left = _stop_everything(process, pid_file)
        if log is not None:
            log.close()
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            shutil.copy(base / "jupyterhub.log", SCREENSHOTS / "hub-jupyterhub.log")  # the run's artifact
        for user in USERS:
            subprocess.run(["userdel", user], capture_output=True)
        shutil.rmtree(base, ignore_errors=True)
        say(f"stopped the hub and {len(left)} leftover process(es); users deleted; {base} removed")
    # the hub itself stops every single-user server and the proxy it started (the sweep above is
    # only the safety net)
    assert not left, f"the hub left these running (killed since): {left}"


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield chromium
        chromium.close()


def _open_assignment_list(page):
    page.get_by_role("menuitem", name="Nbgrader", exact=True).click()
    page.get_by_text("Assignment List", exact=True).click()


def _row_button(page, listing, label):
    """The button of ch05_block's row in one of the Assignment List's lists."""
    button = page.get_by_role("button", name=label, exact=True)
    row = page.locator(f"#{listing} .list_item").filter(has_text=ASSIGNMENT.id).filter(has=button).first
    row.wait_for(timeout=120_000)
    return row.get_by_role("button", name=label, exact=True)


def _feedback_scores(html):
    """{grade id: (score, points)} and the notebook's (score, max) from a feedback page's contents."""
    items = {name: (float(score), float(points)) for name, score, points in
             re.findall(r"<code>([^<]+)</code></a> \(Score: ([\d.]+) / ([\d.]+)\)", html)}
    total = re.search(r"<h4>[^<]*\(Score: ([\d.]+) / ([\d.]+)\)</h4>", html)
    return items, (float(total.group(1)), float(total.group(2))) if total else None


def _fetched_feedback(home):
    pages = sorted((home / ASSIGNMENT.id / "feedback").glob(f"*/{ASSIGNMENT.id}.html"))
    assert len(pages) == 1, pages
    return pages[0]


def test_a_class_day_on_a_hub(hub, browser):
    course, homes, exchange = hub["course"], hub["homes"], hub["exchange"]
    points = ASSIGNMENT.points()
    fault = next(entry for entry in ASSIGNMENT.entries("fault") if entry.id == FAULT)

    nbgrader(TEACHER, "generate_assignment", ASSIGNMENT.id, cwd=course)
    nbgrader(TEACHER, "release_assignment", ASSIGNMENT.id, cwd=course)
    assert (exchange / COURSE / "outbound" / ASSIGNMENT.id / ASSIGNMENT.notebook_name).exists()
    say(f"{TEACHER}: generate_assignment and release_assignment {ASSIGNMENT.id}")

    # s1 in the browser: log in, the hub spawns their JupyterLab, the Assignment List fetches
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(120_000)
    try:
        page.goto(f"{hub['url']}/hub/login")
        page.fill("#username_input", S1)
        page.fill("#password_input", hub["password"])
        page.click("#login_submit")
        page.wait_for_selector(".jp-LabShell", timeout=300_000)  # spawn, then JupyterLab loads
        assert f"/user/{S1}/" in page.url
        say(f"{S1}: logged in; the hub spawned their JupyterLab ({page.url})")
        _open_assignment_list(page)
        _row_button(page, "released_assignments_list", "Fetch").click()
        _row_button(page, "fetched_assignments_list", "Submit").wait_for()
        fetched = homes / S1 / ASSIGNMENT.id
        assert (fetched / ASSIGNMENT.notebook_name).exists()
        assert pwd.getpwuid(fetched.stat().st_uid).pw_name == S1  # fetched by their own server, as them
        page.screenshot(path=str(SCREENSHOTS / "hub-assignment-list-fetched.png"))
        say(f"{S1}: fetched {ASSIGNMENT.id} from the Assignment List")
        _write_sample(fetched)  # the student's work: the reference answers and package
        _chown_tree(fetched, S1)
        _row_button(page, "fetched_assignments_list", "Submit").click()
        _row_button(page, "submitted_assignments_list", "Fetch Feedback").wait_for()
        page.screenshot(path=str(SCREENSHOTS / "hub-assignment-list-submitted.png"))
        say(f"{S1}: submitted from the Assignment List")

        # s2 at the command line, with a faulty gelu
        nbgrader(S2, "fetch_assignment", ASSIGNMENT.id)
        _write_sample(homes / S2 / ASSIGNMENT.id, fault)
        _chown_tree(homes / S2 / ASSIGNMENT.id, S2)
        nbgrader(S2, "submit", ASSIGNMENT.id)
        say(f"{S2}: fetch_assignment, then submit with the {FAULT} fault")

        # the instructor's side
        nbgrader(TEACHER, "collect", ASSIGNMENT.id, cwd=course)
        assert sorted(p.name for p in (course / "submitted").iterdir()) == [S1, S2]
        say(f"{TEACHER}: collect ({S1}, {S2})")
        started = time.monotonic()
        nbgrader(TEACHER, "autograde", ASSIGNMENT.id, cwd=course)
        say(f"{TEACHER}: autograde in {time.monotonic() - started:.0f} s")
        from nbgrader.api import Gradebook
        with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
            scores = {student: {g.name: g.score for g in
                                gradebook.find_submission_notebook(ASSIGNMENT.id, ASSIGNMENT.id, student).grades}
                      for student in (S1, S2)}
        assert scores[S1] == points
        assert scores[S2] == {**points, fault.exercise: 0.0}
        nbgrader(TEACHER, "generate_feedback", ASSIGNMENT.id, cwd=course)
        nbgrader(TEACHER, "release_feedback", ASSIGNMENT.id, cwd=course)
        say(f"{TEACHER}: generate_feedback and release_feedback")

        # s1 fetches feedback from the Assignment List, s2 with the CLI
        _row_button(page, "submitted_assignments_list", "Fetch Feedback").click()
        deadline = time.monotonic() + 120
        while not list((homes / S1 / ASSIGNMENT.id / "feedback").glob(f"*/{ASSIGNMENT.id}.html")):
            assert time.monotonic() < deadline, "the Assignment List fetched no feedback in 120 s"
            time.sleep(1)
        page.screenshot(path=str(SCREENSHOTS / "hub-assignment-list-feedback.png"))
        nbgrader(S2, "fetch_feedback", ASSIGNMENT.id)
        say(f"{S1}: fetched feedback from the Assignment List; {S2}: fetch_feedback")
    finally:
        context.close()

    full = (float(sum(points.values())), float(sum(points.values())))
    pages = {student: _fetched_feedback(homes / student) for student in (S1, S2)}
    for student, path in pages.items():
        assert pwd.getpwuid(path.stat().st_uid).pw_name == student
    s1_items, s1_total = _feedback_scores(pages[S1].read_text(encoding="utf-8"))
    s2_items, s2_total = _feedback_scores(pages[S2].read_text(encoding="utf-8"))
    assert s1_items == {name: (p, p) for name, p in points.items()} and s1_total == full
    lost = points[fault.exercise]
    assert s2_items == {name: (0.0 if name == fault.exercise else p, p) for name, p in points.items()}
    assert s2_total == (full[0] - lost, full[1])
    say(f"feedback: {S1} {s1_total[0]:g}/{s1_total[1]:g}, {S2} {s2_total[0]:g}/{s2_total[1]:g} "
        f"({fault.exercise} 0/{lost:g})")

    # neither student reads the other's page, nor lists the exchange's feedback
    for student, other in ((S1, S2), (S2, S1)):
        denied = as_user(student, "cat", str(pages[other]), check=False)
        assert denied.returncode != 0 and "Permission denied" in denied.stderr, denied
    listing = as_user(S2, "ls", str(exchange / COURSE / "feedback"), check=False)
    assert listing.returncode != 0 and "Permission denied" in listing.stderr, listing
    log = hub["log"].read_text(errors="replace")
    assert "Traceback" not in log, log[-4000:]
    say("each student read only their own feedback; no traceback in the hub's log")

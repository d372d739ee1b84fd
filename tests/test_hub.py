"""A class's day on a real JupyterHub, on this machine only, with one hostile student.

The test starts JupyterHub (LocalProcessSpawner, DummyAuthenticator with one shared password,
configurable-http-proxy from `make hub-proxy`) on 127.0.0.1 and free ports, from the students'
environment (`make student-env`: third-party packages only), with four system users it creates:
an instructor (hero-hub-teacher) and three students (hero-hub-s1, hero-hub-s2 and the hostile
hero-hub-s3), each with a fresh home (0700) in a temporary folder, and nbgrader's exchange shared
between them (a 1777 folder there).  The hub and every student command run in a mount namespace
where the repository is an empty folder but for the students' environment and the proxy, as it
would be out of the students' reach on a real hub; the instructor's commands see it.  The
instructor's course root is a copy of the course (course/ and nbgrader_config.py) whose
nbgrader_config.py points Exchange.root at the shared exchange; the course's configuration
installs its own collect and release (autograder/exchange.py).

The day: the instructor generates and releases ch05_block; s3 fills the inbound folder with
forged and hostile folders (other students' names, far-future and unparsable dates, links to the
course, the repository and /dev/zero, a FIFO, too many, too deep, too large, an escaping name);
s1 logs in in Chromium, fetches from JupyterLab's Assignment List, writes the reference and
submits there; s2 submits the reference with the nbgrader CLI; the instructor collects; s2
resubmits with a faulty gelu while s3 adds links into s1's collected submission and a folder in
s2's name; the instructor collects with --update, autogrades, generates and releases feedback;
s1 fetches feedback from the Assignment List and s2 with the CLI.  Checked: no student reaches a
solution, hidden test, reference body or the grader; every hostile folder is refused and named
(collect's output, exchange-refusals.log) while s1 and s2 are collected; the gradebook holds
exactly s1 (full marks) and s2 (all but gelu); each reads only their own feedback.  However it
ends, the hub, every single-user server and the proxy are stopped, the users deleted and the
folder removed.

Run it alone, with its progress lines:  .venv/bin/python -m pytest tests/test_hub.py -s
HERO_HUB_EXCHANGE=nbgrader runs the same day with nbgrader's own exchange and fails, listing what
did not hold.  It needs root, Chromium (`make browser`), the proxy (`make hub-proxy`), the
students' environment (`make student-env`) and bwrap (`make sandbox`); otherwise it skips and
says why.
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
TEACHER, S1, S2, S3 = "hero-hub-teacher", "hero-hub-s1", "hero-hub-s2", "hero-hub-s3"
STUDENTS = (S1, S2, S3)
USERS = (TEACHER, *STUDENTS)
FAULT = "tanh_gelu"  # s2's submission: the reference with this catalogue entry's gelu
VENV_BIN = Path(sys.executable).parent
# the students' environment (`make student-env`): third-party packages only; the hub runs from it too
STUDENT_ENV = registry.REPO_ROOT / "build" / "student-env"
STUDENT_BIN = STUDENT_ENV / "bin"
# HERO_HUB_EXCHANGE=nbgrader runs the same day with nbgrader's own exchange, to show what the course's
# stops (the test then fails; the /dev/zero and FIFO folders are left out: they hang nbgrader's collect)
STOCK = os.environ.get("HERO_HUB_EXCHANGE") == "nbgrader"
PROXY = registry.REPO_ROOT / "build" / "node" / "node_modules" / ".bin" / "configurable-http-proxy"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
SCREENSHOTS = registry.REPO_ROOT / "build" / "screenshots"
START = time.monotonic()


def _blocking_folders(paths):
    """Folders on the way to `paths` that other users may not pass (/root, where pyenv keeps the
    interpreter the environments link to, say)."""
    return sorted({str(folder) for path in paths for folder in [path, *path.parents]
                   if not folder.stat().st_mode & stat.S_IXOTH})


def _why_not():
    if os.geteuid() != 0:
        return "needs root: it creates the hub's system users and runs their servers as them"
    if CHROMIUM is None:
        return "Chromium is not installed here (`make browser` installs it with apt-get as root)"
    if not PROXY.exists():
        return f"configurable-http-proxy is not installed in {PROXY.parents[2]} (`make hub-proxy` installs it with npm)"
    if not (STUDENT_BIN / "jupyterhub-singleuser").exists():
        return f"the students' environment {STUDENT_ENV} is missing (`make student-env` builds it)"
    if shutil.which("setpriv") is None:
        return "setpriv (util-linux) is missing: root cannot run the users' commands as them"
    if shutil.which("node") is None:
        return "node is not installed: configurable-http-proxy runs on it"
    if shutil.which("bwrap") is None:
        return ("bwrap is missing: the test hides the repository from the students' processes in a mount "
                "namespace of theirs (`make sandbox` installs it)")
    for module in ("jupyterhub", "playwright.sync_api", "psutil"):
        try:
            __import__(module)
        except ImportError:
            return f"{module} is not installed (a dependency in pyproject.toml)"
    return None


def namespace_prefix(visible, hidden=()):
    """A command prefix under which `visible` paths are reachable by any user and `hidden` folders are
    empty (but for the visible paths inside them), without changing a permission on this machine: in
    a mount namespace of that command (and of everything it starts), each hidden folder and each
    folder on the way that others may not pass is replaced by an empty one with just the visible paths
    bound back, read-only, as tests/test_hostile.py runs its batch."""
    visible = sorted({Path(path).resolve() for path in visible})
    masks = sorted({*map(Path, _blocking_folders(visible)), *map(Path, hidden)})
    argv, covered = ["bwrap", "--dev-bind", "/", "/"], set()
    for folder in masks:
        if any(folder.is_relative_to(done) for done in covered):
            continue
        covered.add(folder)
        argv += ["--perms", "0755", "--tmpfs", str(folder)]
        for inner in visible:
            if inner.is_relative_to(folder) and inner != folder:
                argv += [arg for step in reversed(inner.parents) if step.is_relative_to(folder) and step != folder
                         for arg in ("--perms", "0755", "--dir", str(step))]
                argv += ["--ro-bind", str(inner), str(inner)]
    return argv + ["--"]


def instructor_prefix():
    """The instructor's commands: the repository (their course's configuration imports autograder)
    and the instructor's environment, reachable."""
    return namespace_prefix([registry.REPO_ROOT, Path(sys.prefix), Path(sys.base_prefix)])


def student_prefix():
    """The students' commands and the hub (whose children are the students' servers): the students'
    environment and the interpreter it links to, and nothing else of the repository, which stands in
    for an instructor's repository that students cannot reach (docs/hub.md)."""
    return namespace_prefix([STUDENT_ENV, PROXY.parents[2], Path(sys.base_prefix)], hidden=[registry.REPO_ROOT])


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
    """Run argv as `user` (their uid, group and no other groups), with a login-like environment: the
    instructor with the repository and its environment, a student with the students' environment only."""
    entry = pwd.getpwnam(user)
    prefix, bin_folder = (instructor_prefix(), VENV_BIN) if user == TEACHER else (student_prefix(), STUDENT_BIN)
    env = {"HOME": entry.pw_dir, "USER": user, "LOGNAME": user, "LANG": "C.UTF-8",
           "PATH": f"{bin_folder}:/usr/local/bin:/usr/bin:/bin"}
    switch = ["setpriv", f"--reuid={entry.pw_uid}", f"--regid={entry.pw_gid}", "--clear-groups",
              "--inh-caps=-all", "--bounding-set=-all"]
    done = subprocess.run([*prefix, *switch, *map(str, argv)], cwd=cwd or entry.pw_dir, env=env,
                          capture_output=True, text=True)
    if check:
        assert done.returncode == 0, f"{user}: {' '.join(map(str, argv))}\n{done.stdout[-3000:]}\n{done.stderr[-4000:]}"
    return done


def nbgrader(user, *args, cwd=None):
    return as_user(user, str((VENV_BIN if user == TEACHER else STUDENT_BIN) / "nbgrader"), *args, cwd=cwd)


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
        # the hub and bwrap: a session of their own (the proxy and
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
            if STOCK:
                config.write("".join(f"c.ExchangeFactory.{step} = 'nbgrader.exchange.default.{name}'\n" for step, name in
                                     (("collect", "ExchangeCollect"), ("release_assignment", "ExchangeReleaseAssignment"),
                                      ("release_feedback", "ExchangeReleaseFeedback"))))
        _chown_tree(course, TEACHER)
        for student in STUDENTS:
            config = homes / student / ".jupyter" / "nbgrader_config.py"
            config.parent.mkdir()
            config.write_text(f"c = get_config()  # noqa: F821\nc.CourseDirectory.course_id = {COURSE!r}\n"
                              f"c.Exchange.root = {str(exchange)!r}\n", encoding="utf-8")
            _chown_tree(config.parent, student)
        # the students' environment is theirs, and holds nothing of the course's own code
        as_user(S2, str(STUDENT_BIN / "python"), "-c", "import nbgrader, jupyterhub, torch, matplotlib")

        port, password = _free_port(), secrets.token_urlsafe(12)
        (folder / "jupyterhub_config.py").write_text(HUB_CONFIG.format(
            port=port, hub_port=_free_port(), api_port=_free_port(), proxy=str(PROXY), pid_file=str(pid_file),
            folder=folder, password=password, users=set(USERS), singleuser=str(STUDENT_BIN / "jupyterhub-singleuser"),
            path=f"{STUDENT_BIN}:/usr/local/bin:/usr/bin:/bin"), encoding="utf-8")
        log = open(base / "jupyterhub.log", "w")
        env = {key: value for key, value in os.environ.items() if key not in ("VIRTUAL_ENV",)}
        env["PATH"] = f"{STUDENT_BIN}:/usr/local/bin:/usr/bin:/bin"
        env.pop("CONFIGPROXY_AUTH_TOKEN", None)
        # the hub runs from the students' environment, where the repository is out of reach: the
        # single-user servers it starts are the students' own processes
        process = subprocess.Popen([*student_prefix(), str(STUDENT_BIN / "jupyterhub"), "-f",
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


# What a hostile student (s3) makes in the exchange's inbound folder, as themselves, with their own
# tools: a JSON list of {"name": the folder's name, "release": copy the released assignment into it,
# "timestamp": what timestamp.txt says, "links": {path inside: link target}, "fifo": [paths],
# "folders": how many empty folders, "depth": how deep a chain of folders, "sparse": {path: size},
# "secret": what submission_secret.txt says, "unreadable": [paths made mode 000]},
# or {"name", "link_to"} for a link in place of the folder.
ATTACK = r"""
import json, os, shutil, sys
inbound, released, folders = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
for spec in folders:
    path = os.path.join(inbound, spec["name"])
    if "link_to" in spec:
        os.symlink(spec["link_to"], path)
        continue
    shutil.copytree(released, path) if spec.get("release") else os.mkdir(path)
    for name, text in (("timestamp.txt", spec["timestamp"]), ("submission_secret.txt", spec.get("secret", "ab" * 64))):
        with open(os.path.join(path, name), "w", errors="surrogateescape") as file:  # a secret's raw bytes
            file.write(text)
    for inside, target in spec.get("links", {}).items():
        inside = os.path.join(path, inside)
        shutil.rmtree(inside) if os.path.isdir(inside) and not os.path.islink(inside) else None
        os.unlink(inside) if os.path.lexists(inside) else None
        os.symlink(target, inside)
    for inside in spec.get("fifo", []):
        os.mkfifo(os.path.join(path, inside))
    for index in range(spec.get("folders", 0)):
        os.mkdir(os.path.join(path, f"empty{index}"))
    deep = path
    for _ in range(spec.get("depth", 0)):
        deep = os.path.join(deep, "d")
        os.mkdir(deep)
    for inside, size in spec.get("sparse", {}).items():
        with open(os.path.join(path, inside), "wb") as file:
            file.truncate(size)
    os.chmod(path, 0o777)  # as nbgrader's submit leaves a folder
    for inside in spec.get("unreadable", []):
        os.chmod(os.path.join(path, inside), 0)
"""


def _timestamp(when=None):
    """A timestamp as nbgrader's submit writes it (Exchange.timestamp_format in UTC)."""
    import datetime

    return (when or datetime.datetime.now(datetime.timezone.utc)).strftime("%Y-%m-%d %H:%M:%S.%f %Z")


def _attack(exchange, folders):
    """s3 makes `folders` (ATTACK's list) in the inbound folder; returns {tag: folder name}."""
    import json

    as_user(S3, str(STUDENT_BIN / "python"), "-c", ATTACK, str(exchange / COURSE / "inbound"),
            str(exchange / COURSE / "outbound" / ASSIGNMENT.id), json.dumps(folders))
    return {spec["name"].rsplit("+", 1)[1]: spec["name"] for spec in folders}


def _first_attacks(course):
    """Before the honest students submit: forged folders in s1's and s2's names dated 2099 (nbgrader
    would take them as their latest submissions, for good), and s3's own folders that a collect must
    refuse: dated 2099, an unparsable date, a link to the instructor's course folder in place of the
    folder, the notebook and the package as links to the instructor's source notebook and the
    repository's reference package, a package file that is a link to /dev/zero, a FIFO, 2,500 empty
    folders, a chain of 40 folders, a sparse file of 200 GB."""
    future, now = "2099-01-01 00:00:00.000000 UTC", _timestamp()
    source_notebook = course / registry.SOURCE_DIR / ASSIGNMENT.id / ASSIGNMENT.notebook_name
    folders = [
        {"name": f"{S1}+{ASSIGNMENT.id}+{future}+forged_s1", "release": True, "timestamp": future},
        {"name": f"{S2}+{ASSIGNMENT.id}+{future}+forged_s2", "release": True, "timestamp": future},
        {"name": f"{S3}+{ASSIGNMENT.id}+{future}+future", "release": True, "timestamp": future},
        {"name": f"{S3}+{ASSIGNMENT.id}+not a time+badtime", "release": True, "timestamp": "not a time"},
        {"name": f"{S3}+{ASSIGNMENT.id}+{now}+toplink", "link_to": str(source_notebook.parent)},
        {"name": f"{S3}+{ASSIGNMENT.id}+{now}+course", "release": True, "timestamp": now,
         "links": {ASSIGNMENT.notebook_name: str(source_notebook),
                   registry.PACKAGE: str(registry.REPO_ROOT / registry.PACKAGE)}},
        {"name": f"{S3}+{ASSIGNMENT.id}+{now}+wide", "release": True, "timestamp": now, "folders": 2500},
        {"name": f"{S3}+{ASSIGNMENT.id}+{now}+deep", "release": True, "timestamp": now, "depth": 40},
        {"name": f"{S3}+{ASSIGNMENT.id}+{now}+sparse", "release": True, "timestamp": now,
         "sparse": {f"{registry.PACKAGE}/big.py": 200 * 10 ** 9}},
    ]
    if not STOCK:  # each hangs nbgrader's own collect (reads /dev/zero until the disk is full; opens a FIFO)
        folders += [
            {"name": f"{S3}+{ASSIGNMENT.id}+{now}+devzero", "release": True, "timestamp": now,
             "links": {f"{registry.PACKAGE}/model.py": "/dev/zero"}},
            {"name": f"{S3}+{ASSIGNMENT.id}+{now}+fifo", "release": True, "timestamp": now,
             "fifo": [f"{registry.PACKAGE}/pipe.py"]},
            # a package the instructor may not read (nbgrader's collect stopped at it for everyone after)
            {"name": f"{S3}+{ASSIGNMENT.id}+{now}+unreadable", "release": True, "timestamp": now,
             "unreadable": [registry.PACKAGE]},
            # a secret release_feedback cannot read (nbgrader's release_feedback stopped at it for everyone)
            {"name": f"{S3}+{ASSIGNMENT.id}+{now}+badsecret", "release": True, "timestamp": now,
             "secret": "\udcff\udcfe"},
            # a name that would clear the instructor's terminal and forge a line of collect's output
            {"name": f"{S3}+{ASSIGNMENT.id}+\x1b[2J\n[CollectApp | INFO] Collected submission: {S3}+escape",
             "release": True, "timestamp": "x"},
        ]
    return folders


# why each of s3's folders is refused (collect's output and the refusals log say so)
REFUSED = {
    "forged_s1": f"named for {S1} but was made by {S3}",
    "forged_s2": f"named for {S2} but was made by {S3}",
    "forged_now": f"named for {S2} but was made by {S3}",
    "future": "a date in the future",
    "badtime": "'not a time' does not parse",
    "toplink": "it is a symbolic link, not a folder",
    "course": "is a symbolic link",
    "devzero": "'hero_transformer/model.py' is a symbolic link",
    "fifo": "'hero_transformer/pipe.py' is a FIFO",
    "unreadable": "cannot be read by the instructor",
    "badsecret": "submission_secret.txt is not the hex secret",
    "wide": "more than 2000 files and folders",
    "deep": "deeper than 16 folders",
    "sparse": "is larger than 100000000 bytes",
    "other": "is a symbolic link",
    "escape": "does not parse",
}


def _check_refusals(output, course, names):
    """Each of `names` ({tag: folder}) refused, with its reason, in collect's output and in the log,
    and no folder's name written raw (a control character, a line of its own)."""
    log = (course / "exchange-refusals.log").read_text(encoding="utf-8")
    assert "\x1b" not in output + log
    assert not any(line.startswith(f"[CollectApp | INFO] Collected submission: {S3}") for line in output.splitlines())
    assert all(re.match(r"\d{4}-\d\d-\d\dT", line) for line in log.splitlines()), log  # one line a refusal
    for tag, name in names.items():
        for where, text in (("collect's output", output), ("exchange-refusals.log", log)):
            lines = [line for line in text.splitlines() if repr(name) in line]
            assert lines and all(REFUSED[tag] in line for line in lines), (tag, where, lines, text[-3000:])


def _collected_files(course):
    """{student: sorted paths} of `submitted/`, each checked to be a plain file or folder of the instructor."""
    teacher = _uid(TEACHER)
    found = {}
    for student in sorted(os.listdir(course / "submitted")):
        paths = []
        for folder, dirs, files in os.walk(course / "submitted" / student):
            for name in dirs + files:
                info = os.lstat(os.path.join(folder, name))
                assert stat.S_ISDIR(info.st_mode) or stat.S_ISREG(info.st_mode), (folder, name)
                assert info.st_uid == teacher, (folder, name)
                paths.append(os.path.relpath(os.path.join(folder, name), course / "submitted" / student))
        found[student] = sorted(paths)
    return found


def _secrets_out_of_reach(hub):
    """No student reaches a solution, a hidden test, the reference package or the grader: not with
    their commands, not from their server (the hub started it), not through the instructor's home."""
    course, homes = hub["course"], hub["homes"]
    secret = [registry.REPO_ROOT / registry.SOLUTION_DIR / ASSIGNMENT.id / ASSIGNMENT.notebook_name,
              registry.COURSE_DIR / ASSIGNMENT.id / ASSIGNMENT.notebook_name,
              registry.REPO_ROOT / registry.PACKAGE / "model.py",
              registry.REPO_ROOT / "autograder" / "engine.py",
              course / registry.SOURCE_DIR / ASSIGNMENT.id / ASSIGNMENT.notebook_name,
              course / "gradebook.db"]
    for path in secret:
        assert path.exists()
        denied = as_user(S1, "cat", str(path), check=False)
        assert denied.returncode != 0 and ("Permission denied" in denied.stderr or
                                           "No such file" in denied.stderr), (path, denied)
    for module in ("autograder", "hero_transformer", "autograder.exchange"):
        missing = as_user(S2, str(STUDENT_BIN / "python"), "-c", f"import {module}", check=False)
        assert missing.returncode != 0 and "ModuleNotFoundError" in missing.stderr, (module, missing)
    # s1's single-user server, as the hub started it: the students' environment, no repository
    import psutil

    servers = [p for p in psutil.process_iter(["uids", "cmdline"])
               if p.info["uids"] and p.info["uids"].real == _uid(S1) and
               any("jupyterhub-singleuser" in part for part in p.info["cmdline"] or [])]
    assert servers, "s1's single-user server is not running"
    for server in servers:
        assert server.info["cmdline"][1] == str(STUDENT_BIN / "jupyterhub-singleuser"), server.info["cmdline"]
        root = Path(f"/proc/{server.pid}/root")
        assert (root / STUDENT_BIN.relative_to("/") / "jupyterhub-singleuser").exists()
        for path in secret[:4]:
            assert not (root / path.relative_to("/")).exists(), path
    # and the students' environment holds no module, notebook or file of the course's own
    stray = [str(path) for path in STUDENT_ENV.rglob("*")
             if path.name in (registry.PACKAGE, "autograder") or
             path.suffix == ".pth" and str(registry.REPO_ROOT) in path.read_text(errors="replace")]
    assert not stray, stray


MISSED = []  # with HERO_HUB_EXCHANGE=nbgrader: what did not hold


def expect(holds, what):
    """Assert `what`; with nbgrader's own exchange, note it and go on, so the run shows every outcome."""
    if not holds:
        if not STOCK:
            raise AssertionError(what)
        MISSED.append(what)
        say(f"NOT SO: {what}")


def _collect(course, *args):
    """`nbgrader collect` as the instructor (nbgrader's own may fail: its exit and output are shown)."""
    done = as_user(TEACHER, str(VENV_BIN / "nbgrader"), "collect", *args, ASSIGNMENT.id, cwd=course, check=not STOCK)
    collected = {student: (course / "submitted" / student / ASSIGNMENT.id / "timestamp.txt").read_text()
                 for student in sorted(os.listdir(course / "submitted"))} if (course / "submitted").exists() else {}
    say(f"{TEACHER}: collect {' '.join(args)} (exit {done.returncode}); taken (timestamp.txt): {collected}")
    if done.returncode:
        say(done.stderr[-1500:])
    return done


def test_a_class_day_on_a_hub(hub, browser):
    course, homes, exchange = hub["course"], hub["homes"], hub["exchange"]
    points = ASSIGNMENT.points()
    fault = next(entry for entry in ASSIGNMENT.entries("fault") if entry.id == FAULT)

    nbgrader(TEACHER, "generate_assignment", ASSIGNMENT.id, cwd=course)
    nbgrader(TEACHER, "release_assignment", ASSIGNMENT.id, cwd=course)
    assert (exchange / COURSE / "outbound" / ASSIGNMENT.id / ASSIGNMENT.notebook_name).exists()
    say(f"{TEACHER}: generate_assignment and release_assignment {ASSIGNMENT.id}")
    if not STOCK:  # only a folder's maker or the instructor may rename or delete it
        assert (exchange / COURSE / "inbound").stat().st_mode & stat.S_ISVTX

    # s3, before anyone submits: forged folders in s1's and s2's names, and folders of their own
    # that must not be collected
    first = _attack(exchange, _first_attacks(course))
    say(f"{S3}: made {len(first)} hostile folders in the inbound folder ({', '.join(first)})")
    listing = as_user(S3, "ls", str(exchange / COURSE / "inbound"), check=False)
    assert listing.returncode != 0 and "Permission denied" in listing.stderr, listing  # nor anyone's names

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
        _secrets_out_of_reach(hub)
        say("no student reaches solutions/, course/, the reference package, autograder/ or the instructor's course")

        # s2 at the command line: the reference first
        nbgrader(S2, "fetch_assignment", ASSIGNMENT.id)
        _write_sample(homes / S2 / ASSIGNMENT.id)
        _chown_tree(homes / S2 / ASSIGNMENT.id, S2)
        nbgrader(S2, "submit", ASSIGNMENT.id)
        say(f"{S2}: fetch_assignment, then submit (the reference)")

        # the instructor collects: the honest submissions, every hostile folder refused and named
        collected = _collect(course)
        if STOCK:  # nbgrader's collect stops at the unparsable date: without it, what does it take?
            shutil.rmtree(exchange / COURSE / "inbound" / first.pop("badtime"))
            collected = _collect(course)
        expect(sorted(os.listdir(course / "submitted")) == [S1, S2], "collect took only s1 and s2")
        if not STOCK:
            _check_refusals(collected.stderr, course, first)
            reference = _collected_files(course)
            for student in (S1, S2):  # what they submitted: the notebook and the package, as files
                assert {f"{ASSIGNMENT.id}/{ASSIGNMENT.notebook_name}",
                        f"{ASSIGNMENT.id}/{registry.PACKAGE}/model.py"} <= set(reference[student]), reference

        # s2 submits again, with a faulty gelu; s3 links a folder into s1's collected submission
        _write_sample(homes / S2 / ASSIGNMENT.id, fault)
        _chown_tree(homes / S2 / ASSIGNMENT.id, S2)
        nbgrader(S2, "submit", ASSIGNMENT.id)
        taken = course / "submitted" / S1 / ASSIGNMENT.id
        now = _timestamp()
        second = _attack(exchange, [{"name": f"{S3}+{ASSIGNMENT.id}+{now}+other", "release": True, "timestamp": now,
                                     "links": {ASSIGNMENT.notebook_name: str(taken / ASSIGNMENT.notebook_name),
                                               registry.PACKAGE: str(taken / registry.PACKAGE)}},
                                    # in s2's name, dated now: later than s2's resubmission, so only its maker betrays it
                                    {"name": f"{S2}+{ASSIGNMENT.id}+{now}+forged_now", "release": True,
                                     "timestamp": now}])
        say(f"{S2}: submit again with the {FAULT} fault; {S3}: a folder of links into {S1}'s collected submission "
            f"and one in {S2}'s name dated now")
        collected = _collect(course, "--update")
        expect(sorted(os.listdir(course / "submitted")) == [S1, S2], "collect --update took only s1 and s2")
        if not STOCK:
            assert f"Collected submission: {S2}" in collected.stderr
            assert f"Collected submission: {S1}" not in collected.stderr
            _check_refusals(collected.stderr, course, {**first, **second})
            say(f"{TEACHER}: collect --update ({S2}'s resubmission; {S3}'s {len(first) + len(second)} folders refused)")

        started = time.monotonic()
        nbgrader(TEACHER, "autograde", ASSIGNMENT.id, cwd=course)
        say(f"{TEACHER}: autograde in {time.monotonic() - started:.0f} s")
        from nbgrader.api import Gradebook
        with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
            scores = {student.id: {g.name: g.score for g in
                                   gradebook.find_submission_notebook(ASSIGNMENT.id, ASSIGNMENT.id, student.id).grades}
                      for student in gradebook.students}
        say(f"gradebook: {', '.join(f'{name} {sum(items.values()):g}' for name, items in sorted(scores.items()))}")
        expect(sorted(scores) == [S1, S2], "only s1 and s2 are in the gradebook")
        expect(scores.get(S1) == points, "s1 has full points")
        expect(scores.get(S2) == {**points, fault.exercise: 0.0}, "s2 has all but gelu's points")
        if STOCK:
            pytest.fail(f"with nbgrader's own exchange, not so: {'; '.join(MISSED)}")
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

"""Servers that a test starts itself, on this machine only, and always stops and removes.

`postgres_server`: a throw-away PostgreSQL cluster (Debian's `postgresql` package, which `make test`
installs as root) in a temporary folder, run by an unprivileged user: `hero-pg-test` when the tests
run as root (created like tests/test_hostile.py's `hero-grader-test`), else the user running them.
It listens on no TCP port at all (listen_addresses = ''), only on a Unix socket inside that folder,
which only its owner (and root) may enter. `server.database(name)` creates a database and returns
its SQLAlchemy URL. However the tests end, the server is stopped and the folder deleted.

Use it from a test module with `from servers import postgres_server  # noqa: F401`.
"""

import glob
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

PG_USER = "hero-pg-test"
ROLE = "hero"  # the cluster's superuser role (initdb -U); no password: see `start`


def postgres_bindir():
    """The folder holding initdb, pg_ctl and postgres: Debian keeps them out of PATH, in
    /usr/lib/postgresql/<major>/bin (the newest major wins); elsewhere, PATH's initdb."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda path: int(Path(path).parts[-3]) if Path(path).parts[-3].isdigit() else 0)
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).resolve().parent if initdb else None


def _ensure_user(user):
    try:
        pwd.getpwnam(user)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", user], check=True)
    return pwd.getpwnam(user)


def why_not():
    """None when a PostgreSQL server can be started here, else the reason (a skip message)."""
    bindir = postgres_bindir()
    if bindir is None or not (bindir / "pg_ctl").exists():
        return "PostgreSQL's server programs are not installed: `make test` installs them as root (apt-get install postgresql)"
    try:
        import psycopg2  # noqa: F401
    except ImportError:
        return "the psycopg2 driver is missing: pip install psycopg2-binary (a dependency in pyproject.toml)"
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            return "setpriv (util-linux) is missing: root cannot hand the server to an unprivileged user"
        try:
            _ensure_user(PG_USER)
        except (OSError, subprocess.CalledProcessError) as exc:
            return f"cannot create the unprivileged user {PG_USER} for the server: {exc}"
    return None


class PostgresServer:
    """A cluster in `folder`: data in folder/data, the socket folder/.s.PGSQL.5432, the log folder/log."""

    def __init__(self):
        self.bindir = postgres_bindir()
        self.folder = Path(tempfile.mkdtemp(prefix="hero-pg-", dir="/tmp"))  # short: a socket path has 107 bytes
        self.data = self.folder / "data"
        self.log = self.folder / "log"
        self.prefix = []
        if os.geteuid() == 0:
            entry = _ensure_user(PG_USER)
            os.chown(self.folder, entry.pw_uid, entry.pw_gid)
            self.prefix = ["setpriv", f"--reuid={entry.pw_uid}", f"--regid={entry.pw_gid}", "--clear-groups",
                           "--inh-caps=-all", "--bounding-set=-all"]
        os.chmod(self.folder, 0o700)  # the socket's only door: nobody else may reach the server

    def _run(self, program, *args, timeout=120):
        done = subprocess.run([*self.prefix, str(self.bindir / program), *args], cwd=self.folder,
                              env={"PATH": "/usr/bin:/bin", "LC_ALL": "C", "TZ": "UTC"},
                              capture_output=True, text=True, timeout=timeout)
        if done.returncode:
            log = self.log.read_text(errors="replace")[-3000:] if self.log.exists() else ""
            raise RuntimeError(f"{program} {' '.join(args)} failed ({done.returncode}):\n{done.stdout}{done.stderr}{log}")
        return done

    def start(self):
        # trust authentication is safe here only because the socket lies in a folder of mode 0700
        # and no TCP port is open; --no-sync and fsync=off: a throw-away cluster needs no durability
        self._run("initdb", "-D", str(self.data), "-U", ROLE, "--auth=trust", "--encoding=UTF8", "--no-locale",
                  "--no-sync")
        options = f"-c listen_addresses='' -c unix_socket_directories='{self.folder}' -c fsync=off " \
                  "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-o", options, "-w", "-t", "60", "start")
        return self

    def url(self, database="postgres"):
        """SQLAlchemy's URL for `database` through the Unix socket (no host name, no port)."""
        return f"postgresql+psycopg2://{ROLE}@/{database}?host={self.folder}"

    def connect(self, database="postgres"):
        import psycopg2

        return psycopg2.connect(dbname=database, user=ROLE, host=str(self.folder))

    def database(self, name):
        """Create an empty database `name` and return its URL."""
        connection = self.connect()
        try:
            connection.autocommit = True
            with connection.cursor() as cursor:
                cursor.execute(f'CREATE DATABASE "{name}"')
        finally:
            connection.close()
        return self.url(name)

    def running(self):
        return (self.data / "postmaster.pid").exists()

    def stop(self):
        """Stop the server (even half started) and delete its folder; safe to call twice."""
        try:
            if self.running():
                try:
                    self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "-t", "30", "stop", timeout=60)
                except (RuntimeError, subprocess.TimeoutExpired):
                    self._kill_postmaster()
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)

    def _kill_postmaster(self):
        try:
            pid = int((self.data / "postmaster.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return
        try:
            os.kill(pid, signal.SIGKILL)  # the postmaster's own pid, from its own lock file
        except ProcessLookupError:
            return
        for _ in range(100):
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.1)


@pytest.fixture(scope="module")
def postgres_server():
    """A running PostgreSQL server, stopped and removed after the module's tests, pass or fail;
    skips, saying why, where none can be started here."""
    reason = why_not()
    if reason:
        pytest.skip(reason)
    server = PostgresServer()
    try:
        server.start()
        yield server
    finally:
        server.stop()

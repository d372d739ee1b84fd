"""Progress for long runs: a bar with ETA while the work runs, a one-line summary after.

tqdm draws the bar (a maintained library; it keeps to one line in a terminal and is silent
when stderr is not one, so CI logs get only the summary lines).  Bars go to stderr: stdout
carries the table or the JSON.  A bar is redrawn every second while it is open, so its elapsed
time moves even while one unit of work (an nbgrader step, a folder of samples) takes a while.
"""

import subprocess
import sys
import threading
import time

from tqdm import tqdm

REDRAW_SECONDS = 1.0
# no count: what is running and for how long
UNCOUNTED_FORMAT = "{desc}: {elapsed}"


class _Bar(tqdm):
    """tqdm with a thread that, every REDRAW_SECONDS while the bar is open, redraws it or, given
    `poll` (work done so far), moves it to that count."""

    def __init__(self, *args, poll=None, **kwargs):
        super().__init__(*args, **kwargs)
        self._poll, self._closing = poll, threading.Event()
        self._ticker = None
        if not self.disable:
            self._ticker = threading.Thread(target=self._tick, daemon=True)
            self._ticker.start()

    def _tick(self):
        while not self._closing.wait(REDRAW_SECONDS):
            self.catch_up()

    def catch_up(self):
        done = self._poll() - self.n if self._poll and not self.disable else 0
        self.update(done) if done > 0 else self.refresh()  # tqdm redraws an update(0) only now and then

    def close(self):
        closing = getattr(self, "_closing", None)
        if closing is not None and not closing.is_set():
            closing.set()
            if self._ticker is not None and self._ticker is not threading.current_thread():
                self._ticker.join()
            self.catch_up()  # the last count, once the thread no longer moves the bar
        super().close()


def bar(total, what, unit="task", shown=True, poll=None):
    """A bar on stderr when it is a terminal (and `shown`); otherwise a bar that draws nothing.
    `total` None: no count, the time it has run; `poll`: a function giving the work done so far,
    read every second (the caller then does not call update)."""
    return _Bar(total=total, desc=what, unit=unit, file=sys.stderr, disable=None if shown else True,
                dynamic_ncols=True, leave=False, poll=poll, bar_format=None if total is not None else UNCOUNTED_FORMAT)


def run_counting(command, total, count, what, **popen):
    """Run `command`, showing `count()` (work done so far, polled) against `total`, or with
    `total` None only the time it has run; return its exit status."""
    with bar(total, what, unit="item", poll=count if total is not None else None):
        return subprocess.run(command, **popen).returncode


def duration(seconds):
    """42 s, 3 min 05 s, 1 h 02 min."""
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


class Timer:
    """Seconds since it was made: the total a summary line reports."""

    def __init__(self):
        self.start = time.perf_counter()

    @property
    def elapsed(self):
        return time.perf_counter() - self.start

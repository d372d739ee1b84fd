"""Progress for long runs: a bar with ETA while the work runs, a one-line summary after.

tqdm draws the bar (a maintained library; it keeps to one line in a terminal and is silent
when stderr is not one, so CI logs get only the summary lines).  Bars go to stderr: stdout
carries the table or the JSON.
"""

import subprocess
import sys
import time

from tqdm import tqdm


def bar(total, what, unit="task", shown=True):
    """A bar on stderr when it is a terminal (and `shown`); otherwise a bar that draws nothing."""
    return tqdm(total=total, desc=what, unit=unit, file=sys.stderr, disable=None if shown else True,
                dynamic_ncols=True, leave=False)


def run_counting(command, total, count, what, **popen):
    """Run `command`, showing `count()` (work done so far, polled) against `total`; return its
    exit status."""
    with bar(total, what, unit="item") as shown:
        process = subprocess.Popen(command, **popen)
        while process.poll() is None:
            shown.update(max(0, count() - shown.n))
            time.sleep(0.5)
        shown.update(max(0, count() - shown.n))
    return process.returncode


class Timer:
    """Seconds since it was made: the total a summary line reports."""

    def __init__(self):
        self.start = time.perf_counter()

    @property
    def elapsed(self):
        return time.perf_counter() - self.start

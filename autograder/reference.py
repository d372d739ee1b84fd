"""The reference implementation, loaded by file path under a private package name.

The grading process never imports `hero_transformer` by name: a submission
folder on sys.path (the working directory, a notebook kernel) would otherwise
put the student's copy in place of the reference.  Its modules are loaded as
`_hero_reference.<name>` from this repository's hero_transformer/, so their
relative imports (`from .checks import ...`) find the reference too; the
package's __init__ is not run.
"""

import importlib
import sys
import types

from .registry import PACKAGE, REPO_ROOT

PRIVATE = "_hero_reference"


def load(name):
    """hero_transformer/<name>.py of this repository, as module `_hero_reference.<name>`."""
    if PRIVATE not in sys.modules:
        package = types.ModuleType(PRIVATE)
        package.__path__ = [str(REPO_ROOT / PACKAGE)]
        sys.modules[PRIVATE] = package
    return importlib.import_module(f"{PRIVATE}.{name}")


model = load("model")
checks = load("checks")

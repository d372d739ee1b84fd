"""The reference implementation, loaded by file path under private names.

The grading process never imports `hero_transformer` by name: a submission
folder on sys.path (the working directory, a notebook kernel) would otherwise
put the student's copy in place of the reference.
"""

import importlib.util
import sys

from .registry import PACKAGE, REPO_ROOT


def load(name):
    """hero_transformer/<name>.py of this repository, as module `_hero_reference_<name>`."""
    module_name = f"_hero_reference_{name}"
    if module_name not in sys.modules:
        spec = importlib.util.spec_from_file_location(module_name, REPO_ROOT / PACKAGE / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
    return sys.modules[module_name]


model = load("model")
checks = load("checks")

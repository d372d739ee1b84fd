"""Hostile submissions: code that tries to win points it has not earned, or to reach
beyond its own submission.

Each attempt pairs its hostile code with a wrong answer for the item it targets, so
"gained nothing" is a plain check: the target scores 0, every other item keeps the
score an honest submission gets, and nothing outside the submission changes.  The
tests (tests/test_hostile.py) build every attempt, grade them in one run next to an
honest control submission, and then look for the attempts' traces on the machine.

Code templates may use {repo} (this repository), {home}, {marker} (a path outside the
submission the attempt tries to write), {secret_name} and {port}.
"""

import shutil
from dataclasses import dataclass
from pathlib import Path

from . import faults, registry, release

# the wrong implementation each attempt hides behind, per target
WRONG_BODY = {"layer_norm": "sample_variance", "gelu": "relu_instead", "feedforward": "no_activation",
              "block": "post_ln", "parameter_count": "ledger_without_ffn_bias"}
WRONG_ANSWER = {"residual_output": "residual_output = [0.0, 0.0]", "increment_gap": "increment_gap = 0.25",
                "normalised_variance": "normalised_variance = 0.5", "constant_output": "constant_output = [0.0, 0.0]",
                "total_params": "total_params = 1"}
PACKAGE_EXERCISES = tuple(e.id for e in registry.EXERCISES)


@dataclass(frozen=True)
class Attempt:
    id: str
    what: str
    where: str  # "module" (top of model.py), "exercise" (start of the target's body) or "answer" (its cell)
    target: str  # the item whose points are at stake ("*" for every exercise of the package)
    code: str
    needs_process_limit: bool = False  # safe to run only where a pids cgroup bounds it

    @property
    def may_cost(self):
        """Items an attempt may lose: its target, or every package exercise for code that runs
        when the package is imported (every exercise imports it)."""
        return set(PACKAGE_EXERCISES) if self.where == "module" else {self.target}


CATALOGUE = (
    Attempt("patch_allclose", "patches torch.allclose and math.isclose to always agree", "answer",
            "residual_output",
            "import math, torch\ntorch.allclose = lambda *a, **k: True\nmath.isclose = lambda *a, **k: True\n"),
    Attempt("patch_assert_close", "replaces torch.testing.assert_close with a no-op", "module", "block",
            "import torch.testing\ntorch.testing.assert_close = lambda *a, **k: None\n"),
    Attempt("patch_equal", "makes torch.equal always true", "module", "gelu",
            "import torch\ntorch.equal = lambda *a, **k: True\n"),
    Attempt("patch_numpy", "makes numpy's comparisons always agree", "answer", "increment_gap",
            "import numpy\nnumpy.allclose = lambda *a, **k: True\nnumpy.isclose = lambda *a, **k: True\n"
            "numpy.testing.assert_allclose = lambda *a, **k: None\n"),
    Attempt("patch_builtins", "rewrites builtins abs, round and isinstance", "answer", "normalised_variance",
            "import builtins\nbuiltins.abs = lambda x: 0\nbuiltins.round = lambda x, *a: x\n"
            "builtins.isinstance = lambda *a: True\n"),
    Attempt("input_transformer", "installs an IPython input transformer that turns later cells into pass",
            "answer", "normalised_variance",
            "get_ipython().input_transformers_post.append(lambda lines: ['pass\\n'])\n"),
    Attempt("fake_grader_modules", "plants fake grader, reference and check modules in sys.modules and "
            "rewires the probes", "module", "block",
            "import sys, types\nfor _name in ('autograder', 'autograder.engine', 'autograder.probes', "
            "'_hero_reference_model', 'hero_transformer.checks'):\n"
            "    _fake = types.ModuleType(_name)\n    _fake.judge_identity = lambda *a, **k: None\n"
            "    sys.modules[_name] = _fake\n"
            "if 'probes' in sys.modules:\n"
            "    sys.modules['probes'].run_case = lambda module, exercise, name, case, device: case.get('x')\n"),
    Attempt("read_reference", "reads the reference model.py from the repository and runs its gelu", "exercise",
            "gelu",
            "try:\n    _text = open('{repo}/hero_transformer/model.py').read()\n"
            "    _ns = {{}}\n    exec(_text, _ns)\n    return _ns['gelu'](x)\nexcept OSError:\n    pass\n"),
    Attempt("read_solutions", "reads the solution notebook to copy the answer", "answer", "residual_output",
            "try:\n    import json\n"
            "    _nb = json.load(open('{repo}/solutions/ch05_block/ch05_block.ipynb'))\n"
            "    exec(''.join(c for cell in _nb['cells'] for c in cell['source'] if 'residual_output' in c))\n"
            "except OSError:\n    pass\n"),
    Attempt("read_hidden_tests", "reads the source notebook with the hidden tests", "answer", "total_params",
            "try:\n    _src = open('{repo}/course/ch05_block/ch05_block.ipynb').read()\n"
            "    total_params = 107776 if 'hidden_check' in _src else 1\n"
            "except OSError:\n    pass\n"),
    Attempt("gradebook", "opens the course gradebook and rewrites every grade", "answer", "constant_output",
            "import sqlite3\nfor _path in ['{repo}/gradebook.db', '../../../gradebook.db']:\n    try:\n"
            "        _db = sqlite3.connect('file:' + _path + '?mode=rw', uri=True)\n"
            "        _db.execute('UPDATE grade SET extra_credit = 100')\n        _db.commit()\n"
            "    except Exception:\n        pass\n"),
    Attempt("environment", "looks for the answer in the grader's environment", "answer", "normalised_variance",
            "import os\nif '{secret_name}' in os.environ:\n"
            "    normalised_variance = float(os.environ['{secret_name}'])\n"),
    Attempt("fake_pass_lines", "prints fake PASS lines and a fake JSON report", "exercise", "block",
            "import os, sys\nprint('✓ block: 全部检查通过 all checks passed')\n"
            "print('{{\"score\": 21, \"max_score\": 21, \"status\": \"passed\"}}')\n"
            "os.write(1, b'PASS\\n')\nsys.stderr.write('{{\"score\": 21}}\\n')\n"),
    Attempt("sys_exit_at_import", "calls sys.exit(0) when the package is imported", "module", "*",
            "import sys\nsys.exit(0)\n"),
    Attempt("os_exit_at_import", "calls os._exit(0) when the package is imported", "module", "*",
            "import os\nos._exit(0)\n"),
    Attempt("ignore_signals", "ignores SIGINT, SIGTERM and SIGALRM, then loops forever", "exercise", "gelu",
            "import signal\nfor _s in (signal.SIGINT, signal.SIGTERM, signal.SIGALRM):\n"
            "    signal.signal(_s, signal.SIG_IGN)\nwhile True:\n    pass\n"),
    Attempt("loop_at_import", "loops forever when the package is imported", "module", "*",
            "while True:\n    pass\n"),
    Attempt("memory_bomb", "allocates 30 GiB", "exercise", "gelu",
            "_bomb = b' ' * (30 * 2**30)\n"),
    Attempt("fork_bomb", "forks without end", "exercise", "parameter_count",
            "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n",
            needs_process_limit=True),
    Attempt("write_outside", "writes files outside the submission: /tmp, the home folder, the repository",
            "exercise", "layer_norm",
            "for _path in ('{marker}', '{home}/hero-pwned.txt', '{repo}/hero-pwned.txt', '../hero-pwned.txt'):\n"
            "    try:\n        open(_path, 'w').write('pwned')\n    except OSError:\n        pass\n"),
    Attempt("network", "connects to a port on the grading machine", "answer", "increment_gap",
            "import socket\ntry:\n    socket.create_connection(('127.0.0.1', {port}), timeout=2).sendall(b'pwned')\n"
            "except OSError:\n    pass\n"),
)


def _insert_at_body(text, fault, code):
    """Put `code` at the start of the fault's body inside model.py's text."""
    first_line = next(line for line in release._function_body(fault.function, "") if line.strip())
    lines = text.splitlines(keepends=True)
    index = next(i for i, line in enumerate(lines) if line.strip() == first_line.strip())
    indent = lines[index][: len(lines[index]) - len(lines[index].lstrip())]
    hostile = "".join(indent + line + "\n" if line else "\n" for line in code.splitlines())
    return "".join(lines[:index]) + hostile + "".join(lines[index:])


def build(attempt, dest: Path, **values):
    """Write the attempt's submission folder at `dest`; `values` fill the code template.

    The base is the reference sample, or the sample whose fault makes the target wrong."""
    code = attempt.code.format(**values)
    wrong_body = attempt.where != "answer" and attempt.target != "*"
    fault = faults.by_id(WRONG_BODY[attempt.target]) if wrong_body else None
    shutil.copytree(release.SAMPLES_DIR / (fault.id if fault else "reference"), dest)
    model_path = dest / registry.PACKAGE / "model.py"
    model = model_path.read_text(encoding="utf-8")
    if attempt.where == "exercise":
        model_path.write_text(_insert_at_body(model, fault, code), encoding="utf-8")
    elif attempt.where == "module":
        model_path.write_text(code + model, encoding="utf-8")
    else:
        # the wrong value first: an attack that works would overwrite it
        release.replace_answers(dest / "ch05_block.ipynb", {attempt.target: WRONG_ANSWER[attempt.target] + "\n" + code})
    return dest

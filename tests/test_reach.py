"""reach.py: what a submission's own code reaches past torch's public API, read from its source.

Each rule is shown both ways: code an exercise may hold is not named, and each way of reaching
torch's C layer, the grader's modules or the process is. Graded end to end through the catalogue
(tests/test_catalogues.py: the `unseen` bodies, which switch the watch off, lose by this alone)."""

import textwrap

import pytest

from autograder import engine, reach, registry

PACKAGE = {registry.PACKAGE}


def found_in(code):
    return [r.what for r in reach.reaches({"hero_transformer/new.py": textwrap.dedent(code)}, {}, PACKAGE)]


HONEST = [
    "import math\nimport torch\nimport torch.nn.functional as F\nfrom torch import nn\n",
    "from collections import Counter\nfrom dataclasses import dataclass\nimport operator\nx = operator.index(3)\n",
    "from .model import Config\nfrom hero_transformer.checks import visible_check\n",
    "def f(x):\n    return torch.softmax(x, -1) @ x.transpose(-2, -1)\n",
    "class A(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self._mask = None\n"
    "    def forward(self, x):\n        return self._mask, x.__getitem__(0), len.__name__\n",
    "def f(counts):\n    return sorted(counts, key=counts.__getitem__)\n",
    "def f(x):\n    return getattr(torch, 'layer_norm'), hasattr(x, 'shape')\n",
    "import numpy as np\nv = np.zeros(3)\n",
    "import sys, warnings\ndef f(x):\n    print('debug', file=sys.stderr)\n    warnings.warn('w')\n"
    "    return sys.float_info.epsilon\n",
    "from sys import stderr\n",
    # a student's own private members (red team: self._normalize lost LayerNorm), and common imports
    "class N(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self._cache = None\n"
    "    def _normalize(self, x):\n        return x - x.mean(-1, keepdim=True)\n"
    "    def forward(self, x):\n        self._cache = x\n        return self._normalize(x)\n",
    "import time, json\nstart = time.perf_counter()\n",
    "from .checks import visible_check\n",
    "def f(model):\n    model.eval()\n    return model.train()\n",
]


@pytest.mark.parametrize("code", HONEST)
def test_code_an_exercise_may_hold_is_not_named(code):
    assert found_in(code) == []


REACHING = {
    "torch._C": "def f(x):\n    return torch._C._nn.gelu(x)\n",
    "torch.DisableTorchFunction": "def f(x):\n    with torch.DisableTorchFunction():\n        return x\n",
    "import torch._C": "import torch._C\n",
    "from torch import _C": "from torch import _C as room\n",
    "sys.modules": "def f():\n    import sys\n    return sys.modules\n",
    "s._getframe": "import sys as s\ndef f():\n    return s._getframe(1)\n",
    "sys": "import sys\ndef f(g):\n    return g(sys)\n",
    "from sys import modules": "from sys import modules\n",
    "import gc": "import gc\n",
    "import ctypes": "import ctypes\n",
    "import importlib": "import importlib\n",
    "import os": "import os\n",
    "torch.sys": "def f():\n    return torch.sys.modules\n",
    "getattr(…, '_' + 'C')": "def f():\n    return getattr(torch, '_' + 'C')\n",
    "getattr(…, name)": "def f(name):\n    return getattr(torch, name)\n",
    "getattr": "lookup = getattr\n",
    "x.__dict__": "def f(x):\n    return x.__dict__\n",
    "f.__globals__": "def f():\n    return f.__globals__\n",
    "torch.relu.__self__": "def f():\n    return torch.relu.__self__\n",
    "self._C": "class A:\n    def f(self):\n        return self._C\n",  # A.f(torch)
    "e.__traceback__": "def f():\n    try:\n        1 / 0\n    except Exception as e:\n        return e.__traceback__\n",
    "eval": "def f():\n    return eval('1')\n",
    "open": "def f():\n    return open('/proc/self/mem', 'rb')\n",
    "torch.load": "def f(b):\n    return torch.load(b, weights_only=False)\n",
    "import ch06_backward_probes": "import ch06_backward_probes\n",
    "operator.attrgetter": "import operator\nget = operator.attrgetter('x')\n",
    # red team, after the first version (B1-B5): each reached torch._C and kept full marks
    "from .checks import sys": "def f():\n    from .checks import sys as s\n    return s\n",
    "from hero_transformer.checks import os": "from hero_transformer.checks import os\n",
    "enum.bltns": "import enum\nfetch = enum.bltns\n",
    "enum.bltns.getattr": "import enum\ndef f():\n    return enum.bltns.getattr\n",
    "typing.get_type_hints": "import typing\ndef f(g):\n    return typing.get_type_hints(g)\n",
    "case …(_C=…)": "def f(x):\n    match x:\n        case object(_C=c):\n            return c\n",
    "self._sys": "import collections\ndef f():\n    self = collections\n    return self._sys\n",
    "self._C": "class A:\n    _C = None\n    def f(self):\n        return self._C\n",  # A.f(torch)
    "self._os": "class A:\n    def f(self, other):\n        self = other\n        self._os = 1\n        return self._os\n",
}


@pytest.mark.parametrize("what", REACHING)
def test_each_way_past_the_public_api_is_named(what):
    assert what in found_in(REACHING[what])


def test_only_code_that_differs_from_the_course_s_own_is_read_and_charged_where_it_sits():
    reference = engine.reference_files()
    path = "hero_transformer/model.py"
    assert reach.reaches(reference, reference, PACKAGE) == []  # the course's own reflection is not charged
    source = reference[path]
    assert "def gelu(x" in source
    source = source.replace("def gelu(x", "def _helper():\n    return torch._C\n\n\ndef gelu(x", 1)
    source += "\n\ndef _other():\n    import gc\n"
    files = {**reference, path: source}
    targets = [(path, "gelu"), (path, "LayerNorm.forward")]
    found = reach.reaches(files, reference, PACKAGE, targets)
    assert sorted(r.what for r in found) == ["import gc", "torch._C"]
    # outside every exercise: each exercise is charged; inside one: that one only
    assert len(reach.charged(found, targets[1], targets)) == 2
    inside = source.replace("    ### BEGIN SOLUTION\n    return 0.5", "    ### BEGIN SOLUTION\n    import gc\n    return 0.5", 1)
    assert inside != source
    found = reach.reaches({**reference, path: inside}, reference, PACKAGE, targets)
    assert sorted(r.where for r in found if r.what == "import gc") == ["_other", "gelu"]
    assert [r.where for r in reach.charged(found, targets[1], targets) if r.what == "import gc"] == ["_other"]


def test_a_file_that_does_not_compile_is_read_one_block_at_a_time():
    code = "def broken(:\n    pass\n\ndef f():\n    import gc\n"
    assert found_in(code) == ["import gc"]


def test_the_file_is_read_as_the_worker_runs_it():
    """A file the parser accepts but the compiler refuses (a top-level return) is run by the worker one
    block at a time, blocks that the parser saw inside a string included (red team, B6)."""
    code = ('_NOTES = """\n'
            'def gelu(x):\n    return torch._C._nn.gelu(x)\n'
            '_END = 1  # """\n'
            'return\n')
    assert "torch._C._nn" in found_in(code)

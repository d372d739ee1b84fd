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
                        "warnings", "numpy", "operator", "time", "json", "pprint", "textwrap", "fractions",
                        "decimal", "datetime", "unicodedata"})
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
                     # these evaluate strings (annotations) as code, with the module's names
                     "get_type_hints", "ForwardRef", "_eval_type", "singledispatch", "singledispatchmethod",
                     "DisableTorchFunction", "DisableTorchFunctionSubclass",
                     # a frame's or a code object's insides: the grader's own variables are one step up
                     "tb_frame", "tb_next", "f_back", "f_globals", "f_locals", "f_builtins", "f_code", "gi_frame",
                     "gi_code", "cr_frame", "ag_frame", "co_consts", "co_code", "co_names"})
# builtins that turn a string into a name, or code, or reach the namespaces themselves
REFLECTIVE_BUILTINS = frozenset({"eval", "exec", "compile", "__import__", "globals", "locals", "vars", "breakpoint",
                                 "open", "memoryview", "__builtins__", "__loader__", "__spec__", "input"})
NAMED_BY_STRING = frozenset({"getattr", "setattr", "delattr", "hasattr"})  # fine with a plain literal name
# those refused as an attribute too (a module holding builtins under another name): not eval, compile
# or open, which are a model's, torch's and a file's own methods (model.eval())
BUILTINS_AS_ATTRIBUTES = NAMED_BY_STRING | {"exec", "__import__", "globals", "locals", "vars", "breakpoint"}
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
    """The file's statements as the worker runs them: the whole file when it compiles, else each
    top-level block that does (worker.exec_in_blocks). ast.parse alone is not enough: a file the
    parser accepts may still not compile (a `return` at the top level), and the worker then runs
    blocks that the parser saw as the inside of a string."""
    def compiled(text):  # the tree, compiled from itself (the compiler's errors, one parse)
        tree = ast.parse(text)
        compile(tree, "<submission>", "exec", dont_inherit=True)
        return tree.body

    try:
        return compiled(source)
    except (SyntaxError, ValueError):
        pass
    body = []
    for start, text in top_level_blocks(source):
        try:
            body += compiled("\n" * start + text)  # keep line numbers
        except (SyntaxError, ValueError):
            continue
    return body


@lru_cache(maxsize=1)
def torch_private_names():
    """The private names under which torch's modules and main classes hold a module, a class or a
    piece of its C layer. A method may be called with a module as its `self` (`Block.f(torch)`), so
    even an attribute the student's class owns is refused under one of these names: `self._C` is
    `torch._C` there, while a student's own `self._mask` or `self._normalize` is no such name."""
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
            # a private module of torch's own layer, or one that switches dispatch or modes (torch.utils.
            # _python_dispatch, _mode_utils); not a private cache or helper module (torch.compiler._cache)
            module_name = str(getattr(value, "__name__", "")) if isinstance(value, types.ModuleType) else ""
            module = module_name.startswith("torch._") or ("._" in module_name and any(
                word in module_name for word in ("dispatch", "mode", "guard")))
            if module or isinstance(value, (types.BuiltinFunctionType, type)) or (
                    type(value).__module__.startswith("torch._C")):
                names.add(name)
    return frozenset(names)


@lru_cache(maxsize=1)
def own_reexports():
    """The names the course's own package binds at its modules' top level to a module or name imported
    from outside the importable list (checks.py's sys, os and types, cluster.py's ray...): importing
    one of them from the package is importing it."""
    from pathlib import Path

    names = set()
    for path in (Path(__file__).resolve().parent.parent / "hero_transformer").glob("*.py"):
        for node in parse(path.read_text(encoding="utf-8")):
            if isinstance(node, ast.Import):
                names |= {(a.asname or a.name).split(".")[0] for a in node.names
                          if a.name.split(".")[0] not in IMPORTABLE}
            elif isinstance(node, ast.ImportFrom) and not node.level and \
                    (node.module or "").split(".")[0] not in IMPORTABLE | {"hero_transformer"}:
                names |= {a.asname or a.name for a in node.names}
    return frozenset(names)


@lru_cache(maxsize=1)
def module_aliases():
    """Attribute names under which an importable module (or one of its submodules already loaded) holds a
    module that is not importable: `enum.bltns` is builtins, `torch.cuda.tunable.mp` multiprocessing."""
    import importlib
    import sys
    import types

    for name in sorted(IMPORTABLE):  # what a submission may import, with what those load
        try:
            importlib.import_module(name)
        except ImportError:
            continue

    import warnings

    names = set()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a deprecated alias warns when it is looked at
        loaded = list(sys.modules.items())
    for name, module in loaded:
        if module is None or name.split(".")[0] not in IMPORTABLE or any(p.startswith("_") for p in name.split(".")):
            continue
        try:
            members = list(vars(module).items())
        except TypeError:
            continue
        for attribute, value in members:
            top = value.__name__.split(".")[0] if isinstance(value, types.ModuleType) else ""
            if top in REFLECTIVE_MODULES or top == "builtins" or top.startswith("_") and top.strip("_") in (
                    REFLECTIVE_MODULES | {"thread", "io", "operator"}):
                names.add(attribute)
    # names torch's own objects also use for plain values (a loss's `reduction`): not worth a false alarm,
    # and multiprocessing's pickling helpers they name hold no handle on the process
    return frozenset(names - {"reduction", "reducer"})


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
    def __init__(self, path, scope, own_modules, sys_names, classes=()):
        self.path, self.scope, self.own_modules = path, list(scope), own_modules
        self.sys_names = sys_names  # the names `import sys` binds in this file (shared by its finders)
        self.classes, self.methods = list(classes), []  # (names the class owns, its depth); each function's self
        self.found = []

    def add(self, node, what):
        self.found.append(Reach(self.path, getattr(node, "lineno", 0), what, ".".join(self.scope)))

    def _scoped(self, node):
        self.scope.append(node.name)
        self.generic_visit(node)
        self.scope.pop()

    def _function(self, node):
        cls = self.classes[-1] if self.classes and self.classes[-1][1] == len(self.scope) else None
        method = None
        if cls is not None and node.args.args and len(node.args.defaults) < len(node.args.args) \
                and not node.decorator_list:
            first = node.args.args[0].arg
            rebound = any(isinstance(n, ast.Name) and n.id == first and isinstance(n.ctx, (ast.Store, ast.Del))
                          for n in ast.walk(node))
            method = {"self": first, "rebound": rebound, "owned": cls[0]}
        self.methods.append(method)
        self._scoped(node)
        self.methods.pop()

    def _class(self, node):
        self.classes.append((_owned(node), len(self.scope) + 1))
        self._scoped(node)
        self.classes.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = _function
    visit_ClassDef = _class

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
        own = node.level or (node.module or "").split(".")[0] in self.own_modules
        if not own:
            self._module(node, node.module or "")
        for alias in node.names:
            if own:  # the course's own modules import sys, os, types...: none of that passes through
                if alias.name == "*" or alias.name.startswith("_") or alias.name in (
                        REFLECTIVE_MODULES | LOADERS | REFLECTIVE_BUILTINS | NAMED_BY_STRING | own_reexports()):
                    self.add(node, f"from {'.' * node.level}{node.module or ''} import {alias.name}")
                continue
            if node.module == "sys" and alias.name in PLAIN_SYS:
                continue
            if alias.name == "*" or alias.name.startswith("_") or alias.name in REFLECTIVE_MODULES | LOADERS \
                    or node.module == "sys":
                self.add(node, f"from {node.module} import {alias.name}")

    def _bad_attribute(self, name, receiver):
        if receiver is not None and receiver in self.sys_names:
            return name not in PLAIN_SYS
        if name.startswith("__") and name.endswith("__"):
            return name not in PLAIN_DUNDERS
        if name.startswith("_"):
            return not self._own_private(name, receiver) or name in torch_private_names()
        return name in REFLECTIVE_MODULES | LOADERS | BUILTINS_AS_ATTRIBUTES or name in module_aliases()

    def _own_private(self, name, receiver):
        """self._x in a method: `self` is the method's first parameter, never rebound in it, and the
        class itself defines or assigns `_x` (a student's own private attribute, not one of a module
        passed in as `self`)."""
        method = self.methods[-1] if self.methods else None
        return (method is not None and receiver == method["self"] and not method["rebound"]
                and name in method["owned"])

    def visit_Attribute(self, node):
        receiver = node.value.id if isinstance(node.value, ast.Name) else None
        if self._bad_attribute(node.attr, receiver):
            self.add(node, _dotted(node))
        if receiver is not None and receiver in self.sys_names:
            return
        self.generic_visit(node)

    def visit_MatchClass(self, node):  # case object(_C=...) reads attributes by name
        for name in node.kwd_attrs:
            if self._bad_attribute(name, None):
                self.add(node, f"case …({name}=…)")
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


def _owned(node):
    """The names a class defines in its body or assigns as attributes anywhere in it."""
    owned = {n.name for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    owned |= {t.id for n in node.body if isinstance(n, (ast.Assign, ast.AnnAssign))
              for t in (n.targets if isinstance(n, ast.Assign) else [n.target]) if isinstance(t, ast.Name)}
    owned |= {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store)}
    return frozenset(owned)


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
            owner, _ = _find(body, scope, []) if scope else (None, [])
            classes = [(_owned(owner), len(scope))] if isinstance(owner, ast.ClassDef) else []
            finder = _Finder(path, scope, own_modules, sys_names, classes)
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

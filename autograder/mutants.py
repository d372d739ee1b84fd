"""Mutation testing of the hidden tests: `hero mutants [ASSIGNMENT...]`.

Every exercise's reference body is mutated, one small change at a time, and every mutant is
graded as a submission through the real grader (the sandboxed worker, the hidden cases, the
properties), on its own exercise.  A mutant the grader fails is killed; one that earns full
marks survived, and is either a gap in the hidden tests (a new case or property kills it) or
equivalent to the reference (no correct test can tell them apart): then it is listed, with
the reason, in the chapter's `equivalent_mutants.toml`, which a person reviews.  An entry with
`device = "cuda"` is a mutant that differs from the reference only on that device (a tensor
made without `device=`): where the grader checks CUDA it must be killed like any other; on a
machine without one it is counted apart, as not checkable here.

The operators: Cosmic Ray's (a maintained mutation library whose operators work on any code
string through parso, so a body can be mutated without a project, a test command or a
database: arithmetic, comparison and unary operators, numbers, booleans, and/or,
break/continue, loops that run zero times), and the ones it lacks, written here on Python's
own syntax tree and applied as text edits so that a mutant's diff is one line: dropped
keyword and positional arguments (`eps=`, `keepdim=`, `generator=`, `dim`), swapped
arguments, a call replaced by its receiver or its only argument, statements removed or run
twice, `@` for `*`, off-by-one slice and range bounds, and another exception type raised.
"""

import ast
import difflib
import hashlib
import inspect
import shutil
import tempfile
import tomllib
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import fastjsonschema

from . import registry, release

EQUIVALENT_FILE = "equivalent_mutants.toml"
_ARITHMETIC = ("Add", "Sub", "Mul", "Div", "FloorDiv", "Pow", "Mod")
# a call on these names is a module's function (torch.sqrt(v)), not a method of a value (v.sqrt())
_MODULE_NAMES = ("torch", "math", "F", "nn", "random", "itertools", "functools", "collections")
_COSMIC_KEPT = ("core/NumberReplacer", "core/ReplaceTrueWithFalse", "core/ReplaceFalseWithTrue",
                "core/ReplaceAndWithOr", "core/ReplaceOrWithAnd", "core/AddNot", "core/ZeroIterationForLoop",
                "core/ReplaceBreakWithContinue", "core/ReplaceContinueWithBreak")


def _cosmic_operators():
    """The Cosmic Ray operators that make sense on tensor code: bit operators and shifts on float
    tensors only raise, so they are left out."""
    from cosmic_ray.plugins import get_operator, operator_names
    kept = []
    for name in operator_names():
        short = name.partition("/")[2]
        parts = short.split("_")
        if name in _COSMIC_KEPT or short.startswith(("ReplaceComparisonOperator_", "ReplaceUnaryOperator_")) \
                or short.startswith("ReplaceBinaryOperator_") and all(p in _ARITHMETIC for p in parts[1:]):
            kept.append((short, get_operator(name)))
    return kept


@dataclass(frozen=True)
class Mutant:
    exercise: str
    operator: str
    lines: tuple  # the mutated body, dedented
    diff: str  # the change against the reference body, as `- old` / `+ new` lines

    @property
    def id(self):
        """Stable while the reference body and this change stay the same."""
        return hashlib.sha1("\n".join((self.exercise, *self.lines)).encode()).hexdigest()[:10]

    @property
    def sample(self):
        return f"mutant_{self.exercise}_{self.id}"

    def body(self, indent):
        return release.indented(self.lines, indent)

    def function(self):
        """The mutant as a callable, for an in-process run (the grader runs it as a submission)."""
        exercise = registry.exercise(self.exercise)
        return registry.compiled_body(self.exercise, release.exercise_source(exercise, list(self.lines)),
                                      f"mutant {self.id}")


# --- the operators this module adds (text edits at syntax-tree positions) ---------------------


def _offsets(text):
    """(line, column in UTF-8 bytes, as ast gives them) -> an index into `text`."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    return lambda line, col: starts[line - 1] + len(lines[line - 1].encode()[:col].decode())


def _span(node, at):
    return at(node.lineno, node.col_offset), at(node.end_lineno, node.end_col_offset)


_IN_PLACE = {ast.Add: "add_", ast.Sub: "sub_", ast.Mult: "mul_", ast.Div: "div_"}


def _parameters(exercise):
    """The names of the exercise function's parameters (self left out): the arguments a contract
    mutant writes into."""
    from . import reference
    owner = reference.load(exercise.module)
    for name in exercise.target.split("."):
        owner = getattr(owner, name)
    return tuple(name for name in inspect.signature(owner).parameters if name != "self")


def _contract_mutations(text, parameters):
    """(operator, mutated text) for the contract operators (docs/grading.md, "The contract"): an
    argument written in place (`x + y` -> `x.add_(y)`, `x.exp()` -> `x.exp_()` for a parameter x),
    the shift of a stable formula dropped (`a - b` -> `a`: the maximum or the mean no longer
    subtracted), and a result kept between calls (a module-level name set on the first call and
    returned by every later one)."""
    import torch

    tree = ast.parse(text)
    at = _offsets(text)
    lines = text.splitlines(keepends=True)

    def source(node):
        start, end = _span(node, at)
        return text[start:end]

    def replaced(node, new):
        start, end = _span(node, at)
        return text[:start] + new + text[end:]

    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and type(node.op) in _IN_PLACE and isinstance(node.left, ast.Name) \
                and node.left.id in parameters:
            yield "in-place-argument", replaced(node, f"{node.left.id}.{_IN_PLACE[type(node.op)]}({source(node.right)})")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) \
                and node.func.value.id in parameters and not node.func.attr.endswith("_") \
                and callable(getattr(torch.Tensor, node.func.attr + "_", None)):
            yield "in-place-argument", replaced(node.func, f"{node.func.value.id}.{node.func.attr}_")
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub) and not isinstance(node.right, ast.Constant):
            yield "drop-shift", replaced(node, source(node.left))
        if not isinstance(node, ast.Return) or node.value is None or node.lineno != node.end_lineno:
            continue
        value = node.value
        if isinstance(value, ast.Constant) or isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) \
                and value.value.id in _MODULE_NAMES:  # None, 0, math.inf: a kept one is the same value
            continue
        line = lines[node.lineno - 1]
        indent = line[: len(line) - len(line.lstrip())]
        kept = [f"{indent}global KEPT_RESULT  # a module-level cache\n", f"{indent}try:\n",
                f"{indent}    return KEPT_RESULT\n", f"{indent}except NameError:\n",
                f"{indent}    KEPT_RESULT = {source(value)}\n", f"{indent}    return KEPT_RESULT\n"]
        yield "kept-result", "".join(lines[: node.lineno - 1] + kept + lines[node.lineno:])


def _own_mutations(text):
    """(operator, mutated text) for every edit this module's operators make in `text`."""
    tree = ast.parse(text)
    at = _offsets(text)
    lines = text.splitlines(keepends=True)

    def replaced(node, new):
        start, end = _span(node, at)
        return text[:start] + new + text[end:]

    def source(node):
        start, end = _span(node, at)
        return text[start:end]

    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            arguments = list(node.args) + list(node.keywords)
            for index, argument in enumerate(arguments):
                if isinstance(argument, ast.Starred) or isinstance(argument, ast.keyword) and argument.arg is None:
                    continue
                if isinstance(argument, ast.keyword) or len(node.args) > 1:
                    start, end = _span(argument, at)
                    if index > 0:  # from the end of the argument before: ", dim=-1"
                        start = _span(arguments[index - 1], at)[1]
                    elif len(arguments) > 1:  # up to the next one: "dim=-1, "
                        end = _span(arguments[1], at)[0]
                    kind = "drop-keyword" if isinstance(argument, ast.keyword) else "drop-argument"
                    yield kind, text[:start] + text[end:]
            for first, second in zip(node.args, node.args[1:]):
                if source(first) != source(second) and not isinstance(first, ast.Starred) \
                        and not isinstance(second, ast.Starred):
                    (a, b), (c, d) = _span(first, at), _span(second, at)
                    yield "swap-arguments", text[:a] + text[c:d] + text[b:c] + text[a:b] + text[d:]
            on_module = isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) \
                and node.func.value.id in _MODULE_NAMES
            if isinstance(node.func, ast.Attribute) and not on_module:  # x.contiguous() -> x
                yield "drop-call", replaced(node, source(node.func.value))
            elif len(node.args) == 1 and not node.keywords and not isinstance(node.args[0], ast.Starred):
                yield "drop-call", replaced(node, source(node.args[0]))  # torch.sqrt(v) -> v
            if isinstance(node.func, ast.Name) and node.func.id == "range":
                for argument in node.args:
                    if not isinstance(argument, ast.Constant):
                        for sign in ("+", "-"):
                            yield "off-by-one", replaced(argument, f"({source(argument)} {sign} 1)")
        elif isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and isinstance(node.exc.func, ast.Name):
            other = "RuntimeError" if node.exc.func.id != "RuntimeError" else "ValueError"
            yield "raise-type", replaced(node.exc.func, other)
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
            yield "matmul-to-mul", replaced(node, f"{source(node.left)} * {source(node.right)}")
        elif isinstance(node, ast.Slice):
            for bound in (node.lower, node.upper):
                if bound is not None and not isinstance(bound, (ast.Constant, ast.UnaryOp)):
                    for sign in ("+", "-"):
                        yield "off-by-one", replaced(bound, f"({source(bound)} {sign} 1)")
    for node in ast.walk(tree):
        for name in ("body", "orelse", "finalbody"):
            block = getattr(node, name, None)
            if not isinstance(block, list):
                continue
            for statement in block:
                if not isinstance(statement, ast.stmt) or isinstance(statement, (ast.Pass, ast.FunctionDef)):
                    continue
                first, last = statement.lineno - 1, statement.end_lineno - 1
                indent = lines[first][: len(lines[first]) - len(lines[first].lstrip())]
                if statement.col_offset != len(indent.encode()) or sum(
                        other.lineno - 1 <= last and other.end_lineno - 1 >= first for other in block) > 1:
                    continue  # a statement sharing its line (`a; b`, `if x: y`): left alone
                kept = lines[:first] + [f"{indent}pass\n"] + lines[last + 1:]
                yield "remove-statement", "".join(kept)
                if first == last and any(isinstance(n, ast.Call) for n in ast.walk(statement)) \
                        and not isinstance(statement, (ast.Return, ast.Raise)):
                    yield "duplicate-statement", "".join(lines[: last + 1] + [lines[first]] + lines[last + 1:])


def _cosmic_mutations(text):
    from cosmic_ray.mutating import mutate_code
    for name, operator_class in _cosmic_operators():
        operator = operator_class()
        occurrence = 0
        while (mutated := mutate_code(text, operator, occurrence)) is not None:
            yield name, mutated
            occurrence += 1


def mutants_of(exercise):
    """Every distinct mutant of the exercise's reference body that compiles, in a fixed order."""
    reference = release.reference_body(exercise)
    text = "\n".join(reference) + "\n"
    seen, found = {text}, []
    for operator, mutated in list(_cosmic_mutations(text)) + list(_own_mutations(text)) + list(
            _contract_mutations(text, _parameters(exercise))):
        if mutated in seen:
            continue
        seen.add(mutated)
        lines = tuple(mutated.rstrip("\n").splitlines())
        try:
            with warnings.catch_warnings():  # `x is 1` compiles with a warning; the grader judges it
                warnings.simplefilter("ignore")
                compile(release.exercise_source(exercise, list(lines)), "<mutant>", "exec")
        except SyntaxError:
            continue
        diff = "\n".join(line for line in difflib.unified_diff(reference, lines, lineterm="", n=0)
                         if line[:1] in "+-" and not line.startswith(("---", "+++")))
        found.append(Mutant(exercise.id, operator, lines, diff))
    return found


SECOND_ORDER = 20  # second-order mutants per exercise in a full run: a fixed sample of the pairs


def _line_edits(reference, lines):
    """The edits turning the reference lines into `lines`: [(first, past, new lines)] over reference lines."""
    matcher = difflib.SequenceMatcher(None, reference, list(lines), autojunk=False)
    return [(i1, i2, list(lines[j1:j2])) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


def with_second_order(exercise, count=SECOND_ORDER):
    """The exercise's first-order mutants, then `count` second-order ones made from them."""
    first = mutants_of(exercise)
    return first + second_order_of(exercise, count, first)


def second_order_of(exercise, count=SECOND_ORDER, first=None):
    """`count` mutants of two edits each: pairs of first-order mutants whose changes touch lines apart
    (neither adjacent nor shared), both applied; a fixed sample (the pairs whose hash sorts first), so
    that a pair's edits can mask or undo each other, which no first-order mutant shows.  `first`: the
    exercise's first-order mutants, when the caller has them already."""
    reference = release.reference_body(exercise)
    first = mutants_of(exercise) if first is None else first
    edits = {m.id: _line_edits(reference, m.lines) for m in first}

    def reach(mutant):  # the reference lines an edit touches, an insertion touching its neighbours
        return {line for i1, i2, _ in edits[mutant.id] for line in range(i1 - 1, max(i2, i1 + 1) + 1)}

    pairs = sorted(((a, b) for index, a in enumerate(first) for b in first[index + 1:]),
                   key=lambda pair: hashlib.sha1((pair[0].id + pair[1].id).encode()).hexdigest())
    made, seen = [], {m.lines for m in first}
    for a, b in pairs:
        if len(made) == count:
            break
        if reach(a) & reach(b):
            continue
        lines = list(reference)
        for i1, i2, new in sorted(edits[a.id] + edits[b.id], key=lambda edit: edit[0], reverse=True):
            lines[i1:i2] = new
        lines = tuple(lines)
        if lines in seen:
            continue
        seen.add(lines)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                compile(release.exercise_source(exercise, list(lines)), "<mutant>", "exec")
        except SyntaxError:
            continue
        made.append(Mutant(exercise.id, f"{a.operator}+{b.operator}", lines, a.diff + "\n" + b.diff))
    return made


def _tokens(lines):
    """The code tokens of body lines (comments, layout and the end marker left out), as strings."""
    import io
    import tokenize
    skipped = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
               tokenize.ENDMARKER}
    text = "\n".join(lines) + "\n"
    return [token.string for token in tokenize.generate_tokens(io.StringIO(text).readline) if token.type not in skipped]


def changed_tokens(reference, lines):
    """The positions of the reference body's tokens that `lines` replaces or deletes, and, for an
    insertion, the tokens on either side of it."""
    before = _tokens(reference)
    matcher = difflib.SequenceMatcher(None, before, _tokens(lines), autojunk=False)
    touched = set()
    for tag, i1, i2, _, _ in matcher.get_opcodes():
        if tag != "equal":
            touched.update(range(i1, i2) if i2 > i1 else (i1 - 1, i1))
    return touched


def names_its_mistake(mutant, fault):
    """Whether feedback naming `fault` for `mutant` names a mistake the mutant has: the fault's change
    and the mutant's touch the same tokens of the reference body (`x - 1` -> `x * 1` is the fault's
    `x - 1` -> `x`; `+ f - d + 4 * d` is not `+ f + d + 2 * d`, although the totals agree), or the
    fault only says what was observed (Entry.observed)."""
    if fault.observed:
        return True
    reference = release.reference_body(registry.exercise(mutant.exercise))
    ours = release.body_lines(fault.source, "")
    return bool(changed_tokens(reference, mutant.lines) & changed_tokens(reference, ours))


def sample(mutants, per_exercise):
    """A fixed sample: the `per_exercise` mutants of each exercise whose ids sort first."""
    by_exercise = {}
    for mutant in mutants:
        by_exercise.setdefault(mutant.exercise, []).append(mutant)
    return [m for group in by_exercise.values() for m in sorted(group, key=lambda m: m.id)[:per_exercise]]


# --- the reviewed list of equivalent mutants ------------------------------------------------

_EQUIVALENT_SCHEMA = fastjsonschema.compile({
    "type": "object", "additionalProperties": False,
    "properties": {"equivalent": {"type": "array", "items": {
        "type": "object", "additionalProperties": False, "required": ["exercise", "mutant", "change", "reason"],
        "properties": {"exercise": {"type": "string"}, "mutant": {"type": "string", "pattern": "^[0-9a-f]{10}$"},
                       "change": {"type": "string"}, "reason": {"type": "string", "minLength": 10},
                       "device": {"enum": ["cuda"]}}}}}})


def equivalents(assignment):
    """{mutant id: entry} of the chapter's reviewed equivalent mutants (schema-checked)."""
    path = registry.CHAPTERS_DIR / assignment.id / EQUIVALENT_FILE
    if not path.exists():
        return {}
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    try:
        _EQUIVALENT_SCHEMA(data)
    except fastjsonschema.JsonSchemaException as exc:
        raise ValueError(f"{path}: {exc.message}") from None
    return {entry["mutant"]: entry for entry in data.get("equivalent", [])}


# --- grading every mutant -------------------------------------------------------------------


@dataclass
class Outcome:
    mutant: Mutant
    killed: bool
    status: str  # the grader's status for the exercise: passed, failed, timeout, error...
    feedback_en: str = ""
    feedback_zh: str = ""
    misconception: str = ""  # the fault the feedback named, if any
    equivalent: str = ""  # the reviewed reason, when the list holds this mutant as equivalent
    unchecked: str = ""  # the device it differs on, when the grader has none of it here


@dataclass
class ExerciseResult:
    assignment: str
    exercise: str
    outcomes: list = field(default_factory=list)
    stale: list = field(default_factory=list)  # listed as equivalent, but no longer made, or killed

    @property
    def made(self):
        return len(self.outcomes)

    @property
    def killed(self):
        return sum(o.killed for o in self.outcomes)

    @property
    def equivalent(self):
        return sum(bool(o.equivalent) and not o.killed for o in self.outcomes)

    @property
    def unchecked(self):
        return sum(bool(o.unchecked) and not o.killed for o in self.outcomes)

    @property
    def survivors(self):
        return [o for o in self.outcomes if not o.killed and not o.equivalent and not o.unchecked]

    @property
    def score(self):
        """Killed over the mutants that can be killed here (made less the equivalent and unchecked)."""
        killable = self.made - self.equivalent - self.unchecked
        return self.killed / killable if killable else 1.0


def run(assignments, pool=None, per_exercise=None, exercises=None, show_progress=False, timeout=None,
        second_order=SECOND_ORDER):
    """Grade the mutants of every exercise of `assignments` (a fixed sample of `per_exercise` each,
    or all), and `second_order` mutants of two edits per exercise; a list of ExerciseResult."""
    from . import engine
    results = []
    root = Path(tempfile.mkdtemp(prefix="hero-mutants-"))
    try:
        for assignment in assignments:
            listed = equivalents(assignment)
            made = [m for e in assignment.exercises if exercises is None or e.id in exercises
                    for m in with_second_order(e, second_order)]
            chosen = sample(made, per_exercise) if per_exercise else made
            folders = []
            for mutant in chosen:
                folder = root / assignment.id / mutant.sample
                release.write_files(folder, release.sample_package(assignment.chapter, mutant))
                folders.append(folder)
            reports = engine.grade_many(folders, assignment.id, pool, show_progress=show_progress,
                                        only=[[m.exercise] for m in chosen],
                                        **({"timeout": timeout} if timeout else {}))
            by_exercise = {e.id: ExerciseResult(assignment.id, e.id) for e in assignment.exercises
                           if exercises is None or e.id in exercises}
            for mutant, report in zip(chosen, reports):
                item = report.item(mutant.exercise)
                entry = listed.get(mutant.id, {})
                device = entry.get("device", "")
                checked = not device or device in report.devices
                by_exercise[mutant.exercise].outcomes.append(Outcome(
                    mutant, item.status != "passed", item.status, item.feedback_en, item.feedback_zh,
                    item.misconception, "" if device else entry.get("reason", ""), "" if checked else device))
            made_ids = {m.id for m in made}
            for ident, entry in listed.items():
                result = by_exercise.get(entry["exercise"])
                if result is None:
                    continue
                if ident not in made_ids:
                    result.stale.append(f"{ident}: listed as equivalent, but no such mutant is made any more "
                                        f"(the reference body changed?): {entry['change']!r}")
                elif not entry.get("device") and any(o.mutant.id == ident and o.killed for o in result.outcomes):
                    result.stale.append(f"{ident}: listed as equivalent, but the grader kills it: {entry['change']!r}")
            results.extend(by_exercise.values())
        return results
    finally:
        shutil.rmtree(root, ignore_errors=True)


# --- the report -----------------------------------------------------------------------------


SUMMARY_HEADER = ("assignment", "made", "killed", "equivalent", "unchecked here", "survived")


def summary_rows(results):
    """Per chapter: SUMMARY_HEADER's figures."""
    rows = {}
    for r in results:
        row = rows.setdefault(r.assignment, [r.assignment, 0, 0, 0, 0, 0])
        for index, figure in enumerate((r.made, r.killed, r.equivalent, r.unchecked, len(r.survivors)), 1):
            row[index] += figure
    return [tuple(row) for row in rows.values()]


def table(header, rows):
    return "\n".join(["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] +
                      ["| " + " | ".join(map(str, row)) + " |" for row in rows])


def markdown(results, command):
    """The report: a table per exercise, then every survivor with its diff, and stale list entries."""
    out = [f"# Mutation run of the hidden tests\n\n`{command}`\n",
           table(("assignment", "exercise", "made", "killed", "equivalent", "unchecked here", "survived", "score"),
                 [(r.assignment, r.exercise, r.made, r.killed, r.equivalent, r.unchecked, len(r.survivors),
                   f"{r.score:.1%}") for r in results]),
           "", table(SUMMARY_HEADER, summary_rows(results)),
           "", "unchecked here: listed as differing only on a device this machine's grader does not check (CUDA)."]
    named = [(r, o) for r in results for o in r.outcomes if o.misconception]
    if named:  # for review: each should be that fault's mistake, not another one that behaves alike
        out += ["", "## Killed mutants whose feedback names a known fault", "",
                "| exercise | mutant | change | fault named |", "|---|---|---|---|"]
        out += [f"| {r.exercise} | {o.mutant.id} | `{o.mutant.diff.replace(chr(10), ' ⏎ ').replace('|', '¦')}` | "
                f"{o.misconception} |" for r, o in named]
    for r in results:
        for o in r.survivors:
            out += ["", f"## survived: {r.assignment} {r.exercise} mutant {o.mutant.id} ({o.mutant.operator})", "",
                    "```diff", o.mutant.diff, "```",
                    f"Either a case or property that kills it, or in `autograder/chapters/{r.assignment}/"
                    f"{EQUIVALENT_FILE}`:", "", "```toml", toml_entry(o.mutant, "<why no correct test can kill it>"),
                    "```"]
        for line in r.stale:
            out += ["", f"## stale list entry: {r.assignment} {r.exercise}", "", line]
    return "\n".join(out) + "\n"


def toml_entry(mutant, reason):
    change = mutant.diff.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return (f'[[equivalent]]\nexercise = "{mutant.exercise}"\nmutant = "{mutant.id}"\n'
            f'change = "{change}"\nreason = "{reason}"')

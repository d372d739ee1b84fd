"""Grading: send the student's code to a worker, judge what comes back.

This process imports the reference and never imports student code.  Verdicts
are computed here from plain data, so nothing a submission does inside the
worker (patching torch.allclose, builtins, printing "PASS"...) reaches them.
"""

import concurrent.futures
import contextlib
import dataclasses
import json
import re
import secrets
import threading
import traceback
import types
from dataclasses import asdict, dataclass, field, fields
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple, Optional

import torch

from . import probes, reach, reference, registry, report, safefiles, wire
from .reference import checks as properties
from .sandbox import WorkerFailure, WorkerPool, wall_cap

DEFAULT_TIMEOUT = 10.0  # seconds of CPU time per exercise; a hang costs only that exercise
STARVED_RERUNS = 2  # a task that waited for a CPU past its wall-clock cap is run again this often
MAX_SOURCE_BYTES = 1_000_000
MAX_NOTEBOOK_BYTES = 20_000_000  # a notebook's content, measured by notebook_size (whoever wrote the file)
MAX_NOTEBOOK_FILE_BYTES = 4 * MAX_NOTEBOOK_BYTES  # the file read to measure it: its outputs and layout, bounded
# A notebook's shape, checked on its file's bytes before anything parses it (check_notebook_shape), then
# its cells once parsed (parse_notebook): what reading it costs grows with these, not with its bytes
# (red team, issue 38: 800,000 empty cells in 36.8 MB cost `nbgrader autograde` 7 min 37 s and 4.4 GB).
MAX_NOTEBOOK_CELLS = 1_500  # about 20 times the course's longest notebook (chapter 8: 74 cells)
MAX_NOTEBOOK_OBJECTS = 100_000  # JSON objects (each cell, its metadata, each output...): ch05's holds 158
MAX_NOTEBOOK_VALUES = 2_000_000  # JSON values, a string's lines counting one each: 3 times a notebook at
# MAX_NOTEBOOK_BYTES written in 30-character lines (650,000); ch05's holds 1,089
MAX_FILES = 50


# The kinds of failed check, most specific first.  An item's feedback leads with a named
# misconception (the student's outcomes are a catalogued fault's on every case), followed by the
# first failed check (the first failing case: where to see it).  Without one, it gives the first
# failed check of each kind in this order (a chapter's properties in the order its properties.py
# lists them), one line each.  The table shows the first line; --details, nbgrader, pytest and the
# CI reports all of it.  A property's own hint ("these must sum to 1") thus comes before the generic
# "the values differ", which stays after it as context: the case, its inputs, the student's output.
SPECIFICITY = (
    "forbidden",  # a call the exercise forbids, seen while the code ran
    "contract",  # an input the call left changed, which the reference leaves as it was
    "property",  # a property every correct implementation has, failed, in its own words
    "structure",  # the output's type, shape, dtype, NaN/inf, device or structure; an exception raised
    "values",  # the values differ from the reference's, and nothing more specific is known
)


class Problem(NamedTuple):
    """How one output differs, in each language, and how specific that is (a SPECIFICITY kind)."""
    zh: str
    en: str
    kind: str = "values"

    def within(self, zh, en):
        """The same problem said of a part or a case, `zh` and `en` leading its words."""
        return Problem(zh + self.zh, en + self.en, self.kind)


@dataclass
class Check:
    name: str
    passed: bool
    zh: str = ""
    en: str = ""
    kind: str = "values"  # which SPECIFICITY its words have when it fails

    def __post_init__(self):
        if self.kind not in SPECIFICITY:  # feedback would never show it
            raise ValueError(f"a check's kind is one of {SPECIFICITY}, not {self.kind!r}")


@dataclass
class ItemResult:
    id: str
    kind: str  # "exercise" (package stub) or "answer" (notebook answer cell)
    title_zh: str
    title_en: str
    max_score: float
    score: float = 0.0
    status: str = "failed"  # passed, failed, not_implemented, error, timeout
    feedback_zh: str = ""
    feedback_en: str = ""
    checks: list = field(default_factory=list)
    output: str = ""  # what the student's code printed (tail)
    misconception: str = ""  # the id of the fault whose misconception the feedback names, if any
    # lost to the grader's own failure (a worker that died or hung, a machine too busy), not to the
    # student's code: such a result is never kept as final, and a resumed class run grades it again
    grader_fault: bool = False

    def finish(self, misconception=None):
        """Score the item and word its feedback (see SPECIFICITY).  `misconception`: the (zh, en)
        words of the fault the student's outcomes reproduce."""
        failed = [check for check in self.checks if not check.passed]
        if self.status == "failed" and self.checks and not failed:
            self.status = "passed"
        self.score = self.max_score if self.status == "passed" else 0.0
        if self.status == "passed" and not self.feedback_zh:
            self.feedback_zh = f"全部 {len(self.checks)} 项检查通过。"
            self.feedback_en = f"all {len(self.checks)} checks passed."
        elif failed and not self.feedback_zh:
            if misconception:  # it says what is wrong; the first failed check, where it shows
                shown = [misconception, (failed[0].zh, failed[0].en)]
            else:
                first = {}
                for check in failed:
                    first.setdefault(check.kind, check)
                shown = [(first[kind].zh, first[kind].en) for kind in SPECIFICITY if kind in first]
            self.feedback_zh, self.feedback_en = ("\n".join(texts) for texts in zip(*shown))
        return self


@dataclass
class Report:
    assignment: str
    submission: str
    isolation: str
    devices: list
    items: list
    problems: list = field(default_factory=list)
    limits: str = ""

    @property
    def score(self):
        return sum(item.score for item in self.items)

    @property
    def max_score(self):
        return sum(item.max_score for item in self.items)

    def item(self, item_id):
        return next(item for item in self.items if item.id == item_id)

    @property
    def complete(self):
        """Whether every item was decided by the submission's own code."""
        return not any(item.grader_fault for item in self.items)

    def to_json(self):
        data = asdict(self)
        data["score"], data["max_score"], data["complete"] = self.score, self.max_score, self.complete
        data["tolerance"] = dict(properties.TOLERANCE)
        return data

    @classmethod
    def from_json(cls, data):
        """The report `to_json` wrote (a stored result read back)."""
        known = {f.name for f in fields(ItemResult)}
        items = [ItemResult(**{**{k: v for k, v in item.items() if k in known},
                               "checks": [Check(**check) for check in item.get("checks", [])]})
                 for item in data["items"]]
        return cls(data["assignment"], data["submission"], data["isolation"], list(data["devices"]), items,
                   list(data.get("problems", [])), data.get("limits", ""))


# --- reading a submission ------------------------------------------------------


def read_package(folder: safefiles.Folder, problems: list, refused: list):
    """The submission's hero_transformer/*.py as texts (never imported here).  What is not a
    regular file goes to `refused` as well as to `problems`: it costs the exercises.  Only the
    package folder is walked (what the exercises read, whatever else the submission holds); a
    package over a limit (more than MAX_FILES modules, or a walk too large) is refused whole and
    named, never graded in part."""
    try:
        found, not_regular = folder.files(registry.PACKAGE, ".py", MAX_FILES, strict=True)
    except safefiles.TooLarge as exc:
        message = f"{registry.PACKAGE}/ was not graded: {exc}"
        problems.append(message)
        refused.append(message)
        return {}
    problems.extend(not_regular)
    refused.extend(not_regular)
    if not found and not not_regular:
        problems.append(f"{registry.PACKAGE}/ is missing from the submission")
    files = {}
    for relpath in found:
        try:
            data = folder.read(relpath, MAX_SOURCE_BYTES)
        except safefiles.Refused as exc:
            problems.append(str(exc))
            refused.append(str(exc))
            continue
        except OSError as exc:
            problems.append(f"{relpath}: {exc.strerror}")
            continue
        try:
            files[relpath] = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            problems.append(f"{relpath} is not UTF-8 (byte {exc.start}); undecodable bytes were replaced")
            files[relpath] = data.decode("utf-8", "replace")
    return files


def notebook_size(notebook):
    """What the notebook limit measures: the notebook as compact JSON, without its cells' outputs.
    Not the file's bytes, which depend on who wrote it (nbgrader re-indents a submission and splits
    its sources in lines before the grader reads it: 55% larger for a compact one, up to 4 times
    for short lines), and not the outputs, which no grader reads and nbgrader clears: so one
    notebook gets one verdict through every front end."""
    def canonical(cell):  # a source as one string, as nbformat holds it (a file may split it in lines)
        if not isinstance(cell, dict):
            return cell
        cell = {key: value for key, value in cell.items() if key != "outputs"}
        if isinstance(cell.get("source"), list) and all(isinstance(line, str) for line in cell["source"]):
            cell["source"] = "".join(cell["source"])
        return cell

    if isinstance(notebook, dict) and isinstance(notebook.get("cells"), list):
        notebook = {**notebook, "cells": [canonical(cell) for cell in notebook["cells"]]}
    return len(json.dumps(notebook, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass"))


def check_notebook_size(name, notebook):
    size = notebook_size(notebook)
    if size > MAX_NOTEBOOK_BYTES:
        raise safefiles.Refused(f"{name} holds {size} bytes without its outputs (as compact JSON), more than "
                                f"{MAX_NOTEBOOK_BYTES}")


# where a line of a string ends, for nbformat (str.splitlines), in the forms a JSON file may hold it
_LINE_BREAKS = (b"\\n", b"\\r", b"\\f", b"\xc2\x85", b"\xe2\x80\xa8", b"\xe2\x80\xa9")
_ESCAPED_BREAKS = tuple(b"\\u" + code for code in (b"000a", b"000b", b"000c", b"000d", b"001c", b"001d", b"001e",
                                                    b"000A", b"000B", b"000C", b"000D", b"001C", b"001D", b"001E",
                                                    b"0085", b"2028", b"2029"))
_SHAPE_CHUNK = 1 << 20  # bytes read at a time for the structure: memory that does not grow with the count


def notebook_shape(data: bytes):
    """(JSON objects, JSON values) of a notebook file, counted on its bytes without parsing them: a
    few passes at C speed (about a second for 80 MB), in memory that does not grow with the count.

    Values are counted as nbformat holds a notebook, whoever wrote the file: every value once, but a
    string by its lines, and an array of strings (a source as nbgrader writes it, one string a line)
    by its lines too, not as an array.  So the file a student submits and the copy nbgrader writes
    of it measure the same.  Counted outside strings: objects by their `{`, values by the commas
    between them, plus the arrays (other than those of strings and empty ones) and the line breaks
    inside strings beyond the lines already split into an array's strings."""
    # an escaped backslash or quote becomes a plain byte: every quote left opens or closes a string
    data = data.replace(b"\\\\", b"_").replace(b'\\"', b"_")
    breaks = sum(data.count(form) for form in _LINE_BREAKS)
    if b"\\u" in data:
        breaks += sum(data.count(form) for form in _ESCAPED_BREAKS)
    # the structure, a chunk at a time: what lies outside strings, each string as one quote, no white
    # space; a pattern across two chunks is counted once, with the end of the one before
    patterns = (b"{", b"[", b",", b'["', b"[]", b',"', b',":')
    counts, inside, tail = [0] * len(patterns), False, b""
    for start in range(0, len(data), _SHAPE_CHUNK):
        parts = data[start:start + _SHAPE_CHUNK].split(b'"')
        outside = parts[1 if inside else 0::2]
        ends_inside = inside != (len(parts) % 2 == 0)
        structure = (b'"'.join(outside) + (b'"' if ends_inside and outside else b"")).translate(None, b" \t\r\n")
        window = tail + structure
        for index, pattern in enumerate(patterns):
            counts[index] += window.count(pattern) - tail.count(pattern)
        inside, tail = ends_inside, window[-2:]
    objects, arrays, commas, string_arrays, empty_arrays, after_comma, keys = counts
    split_lines = after_comma - keys  # a string after a comma, not a key: an array's next string
    arrays -= string_arrays + empty_arrays
    values = 1 + commas - split_lines + objects + arrays + max(breaks, split_lines)
    return objects, values


def check_notebook_shape(name, data: bytes):
    """Refused when the notebook file `data` holds more objects or values than the grader reads:
    checked before anything parses it, so what parsing it costs stays bounded."""
    objects, values = notebook_shape(data)
    if objects > MAX_NOTEBOOK_OBJECTS:
        raise safefiles.Refused(f"{name} holds {objects} JSON objects (cells, their metadata, outputs), more than "
                                f"{MAX_NOTEBOOK_OBJECTS}")
    if values > MAX_NOTEBOOK_VALUES:
        raise safefiles.Refused(f"{name} holds {values} JSON values (each line of a string counting one), more than "
                                f"{MAX_NOTEBOOK_VALUES}")


def parse_notebook(name, data: bytes):
    """The notebook file `data` as JSON, after the checks on its shape: its objects and values on its
    bytes (check_notebook_shape), then its cells.  Every front end reads a notebook through this
    (nbgrader's screen before nbformat reads it), so each limit gives one verdict, whatever the front
    end; safefiles.Refused names the limit, ValueError or RecursionError says it is not JSON."""
    check_notebook_shape(name, data)
    notebook = json.loads(data.decode("utf-8"))
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    if isinstance(cells, list) and len(cells) > MAX_NOTEBOOK_CELLS:
        raise safefiles.Refused(f"{name} holds {len(cells)} cells, more than {MAX_NOTEBOOK_CELLS}")
    return notebook


def read_notebook_cells(folder: safefiles.Folder, name: str, problems: list, refused: list):
    """The code cells a student wrote or ran, in order; grade cells are the grader's.

    Parsed as plain JSON: importing nbformat (its schema validator) costs about a second."""
    try:
        notebook = parse_notebook(name, folder.read(name, MAX_NOTEBOOK_FILE_BYTES))
        check_notebook_size(name, notebook)
    except FileNotFoundError:
        problems.append(f"{name} is missing from the submission")
        return None, {}
    except safefiles.Refused as exc:  # costs the answers
        problems.append(str(exc))
        refused.append(str(exc))
        return None, {}
    except RecursionError:
        problems.append(f"{name} could not be read as a notebook: its JSON is nested too deeply")
        return None, {}
    except (OSError, UnicodeDecodeError, ValueError) as exc:  # malformed JSON, a truncated file
        problems.append(f"{name} could not be read as a notebook: {str(exc)[:300]}")
        return None, {}
    try:
        if not isinstance(notebook, dict) or notebook.get("nbformat") != 4:
            raise ValueError(f"not an nbformat 4 notebook (nbformat={notebook.get('nbformat')!r})"
                             if isinstance(notebook, dict) else "not a JSON object")
        kernel = notebook.get("metadata", {}).get("kernelspec", {})
        if kernel and (kernel.get("language", "python") != "python" or not kernel.get("name", "python3").startswith("python")):
            problems.append(f"{name} names the kernel {str(kernel.get('name'))[:100]!r} "
                            f"({str(kernel.get('language'))[:100]}); its cells were run as Python")
        cells, answer_cells = [], {}
        for index, cell in enumerate(notebook["cells"]):
            source = cell.get("source", "")
            source = "".join(source) if isinstance(source, list) else source
            if not isinstance(source, str):
                raise ValueError(f"cell {index + 1} has no text source")
            nbgrader = cell.get("metadata", {}).get("nbgrader", {})
            if cell.get("cell_type") != "code":
                continue
            if nbgrader.get("grade"):
                # an answer is checked by the grade cell that follows it
                answer_cells[nbgrader.get("grade_id")] = cells[-1][0] if cells else None
            else:
                cells.append([index, source])
    except (ValueError, KeyError, TypeError, AttributeError) as exc:  # a wrong schema
        problems.append(f"{name} could not be read as a notebook: {str(exc)[:300]}")
        return None, {}
    return cells, answer_cells


# --- reference and misconception outputs (computed once per process) ----------


@lru_cache(maxsize=None)
def probes_source(assignment_id):
    """The text of the chapter's probes, which each of its exercise tasks carries to the worker."""
    return Path(registry.ASSIGNMENTS[assignment_id].probes_file).read_text(encoding="utf-8")


def chapter_probes(exercise_id):
    return registry.assignment_of(exercise_id).part("probes")


@lru_cache(maxsize=None)
def cases_of(exercise_id):
    """The exercise's cases (CPU tensors), from its chapter's probes."""
    return chapter_probes(exercise_id).make_cases(exercise_id)


def _run(module, exercise_id, case_name):
    try:
        return chapter_probes(exercise_id).run_case(module, exercise_id, case_name,
                                                    fresh_copy(cases_of(exercise_id)[case_name]), "cpu")
    except Exception as exc:  # a fault may legitimately fail on a case (eps missing -> nan is not an error)
        return probes.Unusable(f"{type(exc).__name__}: {exc}")


def fresh_copy(value):
    """A copy of a cached case for one in-process run: a body that writes into its inputs (a
    fault's in-place op, a test double, an in-place exercise) must not change the cases that
    every later reference, fault and submission of this process sees."""
    return probes.copy_inputs(value)


def reference_module(exercise_id):
    return reference.load(registry.exercise(exercise_id).module)


# Submissions are judged in whichever thread their last task replied in (Grading), so judges run
# side by side.  What they share is not theirs to share: the reference modules, into which
# outputs_with patches a fault's body while it runs them, and torch's global generator, which cases
# seed.  A reference submission judged while another thread had post_ln patched into the reference
# block lost its points (tests/test_grader.py).  So one item is judged at a time in a process.
_REFERENCE_IN_USE = threading.RLock()


@lru_cache(maxsize=None)
def reference_outputs(exercise_id):
    module = reference_module(exercise_id)
    return {name: _run(module, exercise_id, name) for name in cases_of(exercise_id)}


def contract_record(outcomes):
    """{case: (inputs left changed, inputs or EARLIER the output shares, a second call unlike the first)}
    from probes.run_all's (or a worker's) record of each call: what _diagnose compares besides values."""
    return {name: (frozenset(outcome.get("changed", ())), frozenset(outcome.get("shares", ())),
                   bool(outcome.get("unsteady"))) for name, outcome in outcomes.items()}


def _contract_of(module, exercise_id):
    """contract_record of `module`'s exercise on fresh copies of the cases."""
    return contract_record(probes.run_all(chapter_probes(exercise_id).run_case, module, exercise_id,
                                          fresh_copy(cases_of(exercise_id)), "cpu"))


@lru_cache(maxsize=None)
def fault_contract(exercise_id, fault_id):
    """contract_record of the reference with one fault's body in place."""
    entry = next(entry for entry in faults_of(exercise_id) if entry.id == fault_id)
    with _body_in_reference(exercise_id, entry.function) as module:
        return _contract_of(module, exercise_id)


def _contract_checks(exercise, outcomes):
    """The failed checks of the contract besides the values (docs/grading.md, "The contract"), from what
    the worker says of each CPU call: inputs it left changed, inputs (or another call's memory) its
    output shares, a second call with another outcome.  The worker's names are believed only where they
    are the case's inputs.  outcomes: {case: the worker's record of the call}."""
    cases, checks = cases_of(exercise.id), []
    changed, shared, unsteady = {}, {}, []
    for name, outcome in outcomes.items():
        if name not in cases:
            continue
        for key in outcome.get("changed", ()):
            if key in cases[name] and key not in exercise.may_change:
                changed.setdefault(key, name)
        for key in outcome.get("shares", ()):
            if key == probes.EARLIER or key in cases[name] and key not in exercise.may_share:
                shared.setdefault(key, name)
        if outcome.get("unsteady"):
            unsteady.append(name)
    if changed:
        inputs_zh, inputs_en = _inputs_and_cases(changed)
        checks.append(Check(
            "leaves its inputs as they were", False,
            f"你的代码改写了传入的参数 {inputs_zh}：调用结束后，参数的值与调用前不同。练习函数只读取参数、"
            "把结果放进新的张量返回；不要对参数做原地操作（+=、*=、exp_()、masked_fill_()、x[...] = ...），"
            "需要改动时先 .clone()。",
            f"your code changed its input {inputs_en}: after the call its values were not what they "
            "had been. An exercise reads its arguments and returns its result in a new tensor; no in-place "
            "operation on an argument (+=, *=, exp_(), masked_fill_(), x[...] = ...), or .clone() it first.",
            "contract"))
    earlier = shared.pop(probes.EARLIER, None)
    if shared:
        inputs_zh, inputs_en = _inputs_and_cases(shared)
        checks.append(Check(
            "returns new memory, not a view of its inputs", False,
            f"你返回的张量与传入的参数 {inputs_zh} 共用同一块内存（它是参数的视图，或就是参数本身）："
            "调用者改动结果时，参数也会跟着变。返回新的张量（必要时 .clone()）。",
            f"the tensor you return shares memory with the input {inputs_en} (it is a view of the argument, or "
            "the argument itself): a caller who changes the result changes the argument too. Return a new "
            "tensor (.clone() where needed).",
            "contract"))
    if earlier is not None:
        checks.append(Check(
            "keeps nothing between calls", False,
            f"用例 {earlier} 返回的张量与另一次调用的参数或结果共用内存：你的代码在调用之间保存了张量"
            "（模块级缓存、全局变量、默认参数）并把它（或它的视图）交了出去。每次调用都返回新算出的张量。",
            f"the tensor returned in case {earlier} shares memory with another call's argument or result: your "
            "code keeps a tensor between calls (a module-level cache, a global, a default argument) and hands "
            "it (or a view of it) out. Return a freshly computed tensor from every call.",
            "contract"))
    if unsteady:
        checks.append(Check(
            "gives the same result when called again", False,
            f"同样的输入再调用一次（在其他用例都运行过之后），用例 {'、'.join(unsteady)} 的结果与第一次不同："
            "你的代码在调用之间保留了状态（缓存、计数器、全局变量），或改动了之后还会读到的东西。",
            f"called again with the same inputs (after every other case had run), case {', '.join(unsteady)} gave "
            "another result than the first time: your code keeps state between calls (a cache, a counter, "
            "a global) or changes something it reads later.",
            "contract"))
    return checks


def _inputs_and_cases(found):
    """{input: the case it was seen in} as feedback words, (zh, en)."""
    return ("、".join(f"{key}（用例 {name}）" for key, name in found.items()),
            ", ".join(f"{key} (case {name})" for key, name in found.items()))


def faults_of(exercise_id):
    return [entry for entry in registry.assignment_of(exercise_id).entries("fault") if entry.exercise == exercise_id]


@lru_cache(maxsize=None)
def fault_outputs(exercise_id, fault_id):
    """The outputs of the reference with one fault's body in place of its exercise's."""
    entry = next(entry for entry in faults_of(exercise_id) if entry.id == fault_id)
    return outputs_with(exercise_id, entry.function)


@lru_cache(maxsize=None)
def fault_received(exercise_id, fault_id):
    """A fault's outputs as the grader would receive them from a worker, through the wire (a numpy
    number arrives as a plain one), and the foreign scalar types each case's output holds."""
    return _through_the_wire(fault_outputs(exercise_id, fault_id))


def _through_the_wire(outputs):
    """({case: the output as the grader receives it}, {case: its foreign scalar types})."""
    received, kinds = {}, {}
    for name, value in outputs.items():
        if isinstance(value, probes.Unusable):
            received[name], kinds[name] = value, frozenset()
            continue
        sent = wire.encode(value)
        received[name], kinds[name] = wire.decode(sent), frozenset(wire.scalar_types_of(sent))
    return received, kinds


def diagnosis_in_process(exercise_id, function):
    """The fault whose misconception the feedback would name for `function` as the exercise's body,
    found in this process with the grader's own rule (_diagnose), or None: the tests ask it of many
    bodies at a fraction of a graded submission's cost."""
    received, kinds = _through_the_wire(outputs_with(exercise_id, function))
    outcomes = {name: ("raised", {"type": value.reason.partition(":")[0]}) if isinstance(value, probes.Unusable)
                else ("ok", value) for name, value in received.items()}
    with _body_in_reference(exercise_id, function) as module:
        contract = _contract_of(module, exercise_id)
    return _diagnose(exercise_id, outcomes, contract, kinds)


def outputs_with(exercise_id, function):
    """The outputs, case by case, of the reference with `function` in place of the exercise's
    (a fault's body, or a mutant's in the tests), run in this process."""
    with _body_in_reference(exercise_id, function) as module:
        return {name: _run(module, exercise_id, name) for name in cases_of(exercise_id)}


@contextlib.contextmanager
def _body_in_reference(exercise_id, function):
    """The reference module with `function` in place of the exercise's body for the block's length."""
    exercise, module = registry.exercise(exercise_id), reference_module(exercise_id)
    owner_name, _, attribute = exercise.target.rpartition(".")
    owner = getattr(module, owner_name) if owner_name else module
    # a body that keeps state (an attribute of its own function, a name set on its class or module)
    # starts from none, as it does in a fresh worker, and leaves none behind in the reference
    fresh = types.FunctionType(function.__code__, function.__globals__, function.__name__, function.__defaults__,
                               function.__closure__)
    fresh.__kwdefaults__, fresh.__qualname__ = function.__kwdefaults__, function.__qualname__
    namespaces = {id(space): (space, dict(vars(space))) for space in (module, owner)}
    with _REFERENCE_IN_USE:  # no judge may run the reference while it holds another body
        setattr(owner, attribute, fresh)
        try:
            yield module
        finally:
            for space, saved in namespaces.values():
                for name in set(vars(space)) - set(saved):
                    delattr(space, name)
                for name, value in saved.items():
                    if vars(space).get(name, _GONE) is not value:
                        setattr(space, name, value)


_GONE = object()


# --- comparing values --------------------------------------------------------------


def mismatch(got, expected):
    """None when `got` matches `expected`, else a Problem saying how it differs: "structure" for a
    wrong type, shape, dtype, structure or NaN, "values" when only the values differ.

    The words describe only what the student's code produced: never an expected value,
    list or shape, and no error size from which one could be rebuilt."""
    if isinstance(got, probes.Unusable):
        if isinstance(expected, torch.Tensor):
            return Problem(f"应返回张量，实际返回 {got.reason}。", f"expected a tensor, got {got.reason}.", "structure")
        return Problem(f"输出无法使用：{got.reason}", f"unusable output: {got.reason}", "structure")
    if isinstance(expected, torch.Tensor):
        if isinstance(got, str):  # what a probe saw instead of a usable result ("a numpy.float64, not ..."), said
            return Problem(f"你的结果：{got}", f"your result: {got}", "structure")
        if not isinstance(got, torch.Tensor):
            return Problem(f"应返回张量，实际返回 {type(got).__name__}。", f"expected a tensor, got {type(got).__name__}.",
                           "structure")
        if got.shape != expected.shape:
            return Problem(f"输出形状 {list(got.shape)} 与参考实现不同。",
                           f"the output's shape {list(got.shape)} differs from the reference's.", "structure")
        if got.dtype != expected.dtype:
            # what was seen, no cause: the input's dtype kept, a dtype argument ignored, a constant's dtype...
            return Problem(f"输出 dtype {got.dtype} 与参考实现不同。",
                           f"the output's dtype {got.dtype} differs from the reference's.",
                           "structure")
        if not torch.isfinite(got).all() and torch.isfinite(expected).all():
            return Problem(f"输出含 NaN 或 inf（你的输出：{_values(got)}）。",
                           f"the output contains NaN or inf (your output: {_values(got)}).", "structure")
        if not torch.allclose(got.double(), expected.double(), equal_nan=True, **properties.TOLERANCE):
            return Problem(f"数值与参考实现不一致（你的输出：{_values(got)}）。",
                           f"the values differ from the reference (your output: {_values(got)}).")
        return None
    if isinstance(expected, (tuple, list)):
        if isinstance(got, (tuple, list)) and type(got) is not type(expected):  # the text names which
            return Problem(f"你返回了 {type(got).__name__}；这里应返回 {type(expected).__name__}。",
                           f"you returned a {type(got).__name__}; a {type(expected).__name__} is asked for here.",
                           "structure")
        if not isinstance(got, (tuple, list)) or len(got) != len(expected):
            return Problem(f"返回值的结构与参考实现不同（你返回了 {_describe(got, 'zh')}）。",
                           f"the returned structure differs from the reference's (you returned {_describe(got, 'en')}).",
                           "structure")
        for index, (got_item, expected_item) in enumerate(zip(got, expected)):
            if _labelled(expected_item) and _labelled(got_item) and got_item[0] == expected_item[0]:
                problem = mismatch(got_item[1], expected_item[1])  # a probe's named output: say its name
                if problem:
                    return problem.within(f"{expected_item[0]}：", f"{expected_item[0]}: ")
                continue
            problem = mismatch(got_item, expected_item)
            if problem:  # say which item: "your result '雲'" alone does not say where in a list
                return problem.within(f"第 {index} 项（从 0 数起）：", f"item {index} (counting from 0): ")
        return None
    if type(expected) is int and type(got) is float:  # the text says 整数: 107776.0 is not one
        # its value is not shown: a float equal to the expected integer would reveal it
        return Problem("你的结果是 float；这里应返回整数（int）。",
                       "your result is a float; an integer (int) is asked for here.", "structure")
    if type(expected) is float and type(got) is int:  # the text says 浮点数: 1 is not one (nor shown)
        return Problem("你的结果是 int；这里应返回浮点数（float）。",
                       "your result is an int; a float is asked for here.", "structure")
    if got != expected or type(got) is not type(expected) and not _both_numbers(got, expected):
        # another type (a text where a number belongs, "raised ..." where a value does) is a wrong structure
        kind = "values" if type(got) is type(expected) or _both_numbers(got, expected) else "structure"
        return Problem(f"你的结果 {_describe(got, 'zh')} 与参考实现不同。",
                       f"your result {_describe(got, 'en')} differs from the reference.", kind)
    return None


def _labelled(value):
    """A probe's named output, ("label", value): a chapter's probes return dicts as such pairs."""
    return isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], str)


def _values(tensor, count=6):
    """The student's own tensor as feedback shows it: its first values, never the expected ones."""
    flat = tensor.detach().reshape(-1)[:count].tolist()
    shown = ", ".join(f"{value:.4g}" if isinstance(value, float) else str(value) for value in flat)
    return f"[{shown}{', …' if tensor.numel() > count else ''}]"


def _both_numbers(a, b):
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (a, b))


def _describe(value, lang):
    """A student's value in feedback of one language (the words around it are that language's):
    a tensor by its shape, a list by its length, anything else as itself."""
    if isinstance(value, torch.Tensor):
        return f"形状为 {list(value.shape)} 的张量" if lang == "zh" else f"a tensor of shape {list(value.shape)}"
    if isinstance(value, (tuple, list)):
        return (f"{len(value)} 项的 {type(value).__name__}" if lang == "zh" else
                f"a {type(value).__name__} of {len(value)} items")
    return repr(value)[:200]


# --- judging one exercise --------------------------------------------------------------


def _properties(exercise_id, out):
    """Checks that hold for any correct implementation (the chapter's properties.py), from the
    student's CPU outputs."""
    assignment = registry.assignment_of(exercise_id)
    module = assignment.part("properties")
    if module is None:
        return []
    found = module.check(exercise_id, out, cases_of(exercise_id), reference_module(exercise_id), properties)
    return [Check(name, problem is None, *(problem or ("", "")), kind="property") for name, problem in found]


def _same_outcome(got, fault_value):
    """Whether a student's outcome on one case, ("ok", value) or ("raised", what), is the fault's
    (a value, or probes.Unusable when the fault's body raised: then the same exception type)."""
    kind, value = got
    if isinstance(fault_value, probes.Unusable):
        return kind == "raised" and fault_value.reason.partition(":")[0] == value.get("type")
    return kind == "ok" and mismatch(value, fault_value) is None


def _diagnose(exercise_id, cpu, contract, foreign):
    """The known misconception the student's outcomes reproduce, or None.

    A fault is named only when the student's outcome is the fault's on every case (the same
    value, or the same exception type where the fault's body raised): a body that matches a
    fault only where the fault raised, or only on the cases that do not tell it from the
    reference, has another mistake, and naming this one would send the student to the wrong
    line.  `contract`: contract_record of the student's calls, which must be the fault's too (a
    fault that writes into an input, hands out a view or keeps state is named only for a call
    that does the same, and a fault that does none of these never for one that does);
    `foreign`: {case: the foreign scalar types of the student's output} (wire.scalar_types_of),
    which must be the fault's too."""
    nothing = (frozenset(), frozenset(), False)
    for entry in faults_of(exercise_id):
        expected, kinds = fault_received(exercise_id, entry.id)
        if all(name in cpu and _same_outcome(cpu[name], value) and kinds[name] == foreign.get(name, frozenset())
               for name, value in expected.items()):
            if all(record == contract.get(name, nothing) for name, record in fault_contract(exercise_id, entry.id).items()):
                return entry
    return None


_SHOWN_INPUTS = 5  # a case's first inputs that feedback shows; the rest is "…"
_SHOWN_CHARS = 60  # the longest literal an input is shown as; a longer one is cut with "…"
_USUAL_DTYPES = (torch.float32, torch.int64)  # the dtypes feedback does not name


def _case_inputs(exercise_id, case_name, lang):
    """The failing case's inputs, for the feedback in `lang`: the student may rerun it by hand.

    `key=value` is a literal (a number, None, a short list of numbers, the positional `args`);
    `key: words` says what the input is, so that no bracket reads as a list holding a number:
    ids (a case's integer tensor: every chapter's holds token ids) by their count and values
    when 1-D ("train: 8 个 id [1, 1, 2, …]" / "train: 8 ids [...]"), else by their shape ("形状
    [2, 5] 的 id" / "ids of shape [2, 5]"); any other tensor by its shape ("形状 [2, 3, 4]" /
    "shape [2, 3, 4]"); a dtype other than float32 and int64 is named; a text by its length
    ("46 个字符" / "46 characters") and its start; a list of texts or tensors, or a long list,
    by its length and its first items."""
    case = cases_of(exercise_id)[case_name]
    parts = [f"{key}={tuple(value)}" if key == "args" else f"{key}{_input_words(value, lang)}"
             for key, value in list(case.items())[:_SHOWN_INPUTS]]
    return ", ".join(parts) + (", …" if len(case) > _SHOWN_INPUTS else "")


def _input_words(value, lang):
    """One input as `_case_inputs` shows it, after its name: ": words" or "=literal"."""
    zh = lang == "zh"
    if isinstance(value, torch.Tensor):
        return ": " + _tensor_words(value, zh)
    if isinstance(value, str):
        return ": " + (f"{len(value)} 个字符 " if zh else f"{_count(len(value), 'character')} ") + _cut(value)
    if isinstance(value, (list, tuple)) and value and all(isinstance(item, torch.Tensor) for item in value):
        shown = [_tensor_words(item, zh) for item in value[:2]]
        return ": " + (f"{len(value)} 个张量（{'；'.join(shown)}{'；…' if len(value) > 2 else ''}）" if zh else
                       f"{_count(len(value), 'tensor')} ({'; '.join(shown)}{'; …' if len(value) > 2 else ''})")
    if isinstance(value, (list, tuple)) and value and all(isinstance(item, str) for item in value):
        return ": " + (f"{len(value)} 个字符串 " if zh else f"{_count(len(value), 'string')} ") + _cut(value)
    if isinstance(value, (list, tuple)) and len(repr(value)) > _SHOWN_CHARS:
        return ": " + (f"{len(value)} 项 " if zh else f"{_count(len(value), 'item')} ") + _cut(value)
    return "=" + _cut(value)


def _tensor_words(tensor, zh):
    """A case's tensor by its shape (its values are the probes' own), ids also by their count."""
    dtype = "" if tensor.dtype in _USUAL_DTYPES else str(tensor.dtype).removeprefix("torch.")
    shape = list(tensor.shape)
    if tensor.is_floating_point() or tensor.is_complex() or tensor.dtype == torch.bool:
        shown = f"形状 {shape}" if zh else f"shape {shape}"
        return shown + (f"（{dtype}）" if zh else f" ({dtype})") if dtype else shown
    ids = f"{dtype} id" if dtype else "id"
    if tensor.dim() == 1:
        return (f"{len(tensor)} 个 {ids} " if zh else f"{_count(len(tensor), ids)} ") + _cut(tensor.tolist())
    if tensor.dim() == 0:
        return f"单个 {ids} {tensor.item()}（0 维张量）" if zh else f"a single {ids} {tensor.item()} (a 0-dim tensor)"
    return f"形状 {shape} 的 {ids}" if zh else f"{ids}s of shape {shape}"


def _count(number, noun):
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _cut(value):
    """`value` as Python writes it, cut to about _SHOWN_CHARS characters: a text inside its quotes,
    a list after an item."""
    text = repr(value)
    if len(text) <= _SHOWN_CHARS:
        return text
    if isinstance(value, str):
        shown = repr(value[:_SHOWN_CHARS])
        return shown[:-1] + "…" + shown[-1]
    if not isinstance(value, (list, tuple)):
        return text[:_SHOWN_CHARS] + "…"
    shown, used = [], 0
    for item in value:
        piece = repr(item)[:_SHOWN_CHARS]
        if shown and used + len(piece) > _SHOWN_CHARS:
            break
        shown.append(piece)
        used += len(piece) + 2
    opening, closing = ("[", "]") if isinstance(value, list) else ("(", ")")
    return f"{opening}{', '.join(shown)}, …{closing}"


def _outcome(entry):
    if "ok" in entry:
        return "ok", probes.decode(entry["ok"])
    if "raised" in entry:
        return "raised", entry["raised"]
    return "ok", probes.Unusable("no output")


def _not_implemented_message(exercise):
    return (
        f"尚未实现：仍是 NotImplementedError('{exercise.id}')，请完成 {exercise.target}。",
        f"not implemented yet: still NotImplementedError('{exercise.id}'); fill in {exercise.target}.",
    )


def _raised_message(raised, case_name):
    if raised["kind"] == "not_implemented":
        stub = raised["message"]
        return Problem(f"调用了尚未实现的部分 NotImplementedError('{stub}')（用例 {case_name}）。",
                       f"called something not implemented yet: NotImplementedError('{stub}') (case {case_name}).",
                       "structure")
    tail = "\n".join(raised.get("traceback", "").strip().splitlines()[-4:])
    kind = raised.get("type", "an exception")
    hint = _one_process_hint(raised)
    return Problem(f"抛出了 {kind}: {raised['message']}\n{tail}" + hint[0],
                   f"raised {kind}: {raised['message']}\n{tail}" + hint[1], "structure")


_NEW_PROCESS_ROUTES = ("fork", "Popen", "subprocess", "multiprocessing", "exec", "spawn", "system")


def _one_process_hint(raised):
    """A thread or process the task tried to start (refused by the sandbox: confine.forbid_new_processes)."""
    text = raised.get("message", "") + raised.get("traceback", "")
    refused_thread = "can't start new thread" in text
    refused_process = raised.get("type") == "PermissionError" and any(word in text for word in _NEW_PROCESS_ROUTES)
    if not (refused_thread or refused_process):
        return ("", "")
    return ("\n评分时每个任务只有一个进程、一个线程：不能启动线程、子进程或其它程序。",
            "\nwhile grading, each task is one process with one thread: threads, subprocesses and other programs "
            "are refused.")


_ROUTE = re.compile(r"torch(\.(?:[A-Za-z_][A-Za-z0-9_]*|<locals>)){1,12}\Z")


def _forbidden_route(entry, forbidden):
    """The torch functions through which the watch saw an `internals` call (probes.watching reports
    "<call>\t<dotted name>"), as (zh, en) words for the feedback: each named only when it is a plain
    dotted name under one of the registry's own prefixes for that call; nothing if none is."""
    routes = []
    for item in forbidden:
        call, tab, route = item.partition("\t")
        if tab and call == entry.call and len(route) <= 200 and _ROUTE.match(route) and any(
                route == prefix or route.startswith(prefix + ".") for prefix in entry.internals):
            routes.append(route)
    if not routes:
        return "", ""
    named = ", ".join(routes[:2])
    return f"（经由 {named}）", f" (through {named})"


@lru_cache(maxsize=1)
def reference_files():
    """{path: source} of the course's own package, as a submission names its files: what the
    submission's code is compared with to find the code its student wrote (reach.reaches)."""
    folder = registry.REPO_ROOT / registry.PACKAGE
    return {f"{registry.PACKAGE}/{path.relative_to(folder).as_posix()}": path.read_text(encoding="utf-8")
            for path in sorted(folder.rglob("*.py"))}


def reaches_by_exercise(files, assignment):
    """{exercise id: the reaches (reach.py) in the package `files` ({path: source}) that cost it}."""
    def target(exercise):
        return f"{registry.PACKAGE}/{exercise.module}.py", exercise.target

    targets = [target(e) for e in assignment.exercises]
    found = reach.reaches(files, reference_files(), {registry.PACKAGE}, targets)
    return {e.id: reach.charged(found, target(e), targets) for e in assignment.exercises}


def _reach_check(reaches):
    """The check an exercise fails when code the student wrote reaches past torch's public API or
    into the process (reach.py): named by file, line and construct, at most three."""
    named = "; ".join(f"{r.path} line {r.line}: {r.what}" for r in reaches[:3]) + ("; …" if len(reaches) > 3 else "")
    return Check(
        "reaches nothing private", False,
        f"本练习只能用 torch 的公开接口和课程自己的代码；你写的代码用到了 torch 的内部接口或 Python 的反射/进程访问"
        f"（私有名字、getattr 拼出的名字、__dict__、sys.modules、gc、ctypes 之类），评分器不评这样的代码：{named}。",
        f"exercises may use only torch's public API and the course's own code; code you wrote reaches torch's "
        f"internals or Python's reflection and the process (a private name, a name built for getattr, __dict__, "
        f"sys.modules, gc, ctypes and the like), which the grader does not grade: {named}.", "forbidden")


def judge_exercise(exercise, max_score, reply, devices_seen, reaches=()):
    """The exercise's result from the worker's reply; `reaches`: what the student's code reaches past
    the public API (reach.charged for this exercise), each costing the exercise."""
    result = ItemResult(exercise.id, "exercise", exercise.title_zh, exercise.title_en, max_score)
    if reaches:
        # that check alone, and nothing the code printed, raised or returned: code that reaches into
        # the process gets no channel back out of it (the chapter's probes are in its memory)
        result.checks.append(_reach_check(list(reaches)))
        return result.finish()
    if _judge_failure(result, reply):
        return result.finish()
    body = reply["payload"]["body"]
    # the devices are the ones the worker found before any task ran, not the reply's say:
    # a reply that leaves one out fails there
    devices = reply.get("devices", ["cpu"])
    devices_seen.update(devices)
    load_problems = body.get("load_problems", [])
    # per device and case: ("ok", value) or ("raised", what the student's code raised)
    decoded = {device: {name: _outcome(v) for name, v in body["outputs"].get(device, {}).items()} for device in devices}
    cpu = decoded.get("cpu", {})
    if cpu and all(kind == "raised" and v["kind"] == "not_implemented" and v["message"] == exercise.id
                   for kind, v in cpu.values()):
        result.status = "not_implemented"
        result.feedback_zh, result.feedback_en = _not_implemented_message(exercise)
        return result.finish()
    expected = reference_outputs(exercise.id)
    for device, outputs in decoded.items():
        for name, ref in expected.items():
            kind, got = outputs.get(name, ("ok", probes.Unusable("no output")))
            problem = _raised_message(got, name) if kind == "raised" else mismatch(got, ref)
            if problem is None and kind == "ok" and wire.devices_of(body["outputs"][device][name]["ok"]) - {device}:
                problem = Problem("输出不在输入所在的设备上。", "the output is not on the input's device.", "structure")
            foreign = wire.scalar_types_of(body["outputs"][device][name]["ok"]) if kind == "ok" else set()
            if problem is None and foreign:
                shown = "、".join(sorted(foreign))
                problem = Problem(f"你的结果里有 {shown} 类型的值：本课程的函数返回 Python 自己的 int、float、str"
                                  "（用 int(...)、float(...) 或张量的 .item() 转换）。",
                                  f"your result holds a value of type {', '.join(sorted(foreign))}: the course's "
                                  "functions return Python's own int, float and str (convert with int(...), "
                                  "float(...) or a tensor's .item()).", "structure")
            label = f"matches the reference on case '{name}' ({device})"
            if problem and not (kind == "raised" and got["kind"] == "not_implemented"):  # say where, and on what
                problem = problem.within(f"用例 {name}（{device}；输入 {_case_inputs(exercise.id, name, 'zh')}）：",
                                         f"case {name} ({device}; inputs {_case_inputs(exercise.id, name, 'en')}): ")
            result.checks.append(Check(label, problem is None, *(problem or ("", ""))))
    cpu_values = {name: value for name, (kind, value) in cpu.items() if kind == "ok"}
    result.checks.extend(_properties(exercise.id, cpu_values))
    # what else each CPU call did (inputs changed, memory shared, a second call unlike the first): judged
    # here; the changed inputs are matched by _diagnose too
    result.checks.extend(_contract_checks(exercise, body["outputs"].get("cpu", {})))
    # the call is named from the registry, never from the reply's own words
    used = [entry for entry in exercise.forbids if entry.call in body.get("forbidden", [])]
    for entry in used:
        route = _forbidden_route(entry, body.get("forbidden", []))
        result.checks.insert(0, Check(
            "uses no forbidden shortcut", False,
            f"本练习要求自己写出计算，不能调用 {entry.call_zh or entry.call}；评分器在运行你的代码时看到了这个调用{route[0]}。",
            f"this exercise asks you to write the computation yourself, not to call {entry.call}; the grader saw "
            f"your code make that call{route[1]}.", "forbidden"))
    misconception = None
    if not all(check.passed for check in result.checks) and not used:
        kinds = {name: frozenset(wire.scalar_types_of(outcome["ok"]))
                 for name, outcome in body["outputs"].get("cpu", {}).items() if "ok" in outcome}
        diagnosis = _diagnose(exercise.id, cpu, contract_record(body["outputs"].get("cpu", {})), kinds)
        if diagnosis is not None:
            result.misconception = diagnosis.id
            misconception = ("可能的误解：" + diagnosis.zh, "likely misconception: " + diagnosis.en)
    result.output = reply.get("output_tail", "")
    result.finish(misconception)
    if result.status != "passed" and load_problems:
        result.feedback_zh += "\n载入你的代码时出错：" + "；".join(load_problems)
        result.feedback_en += "\nwhile loading your code: " + "; ".join(load_problems)
    return result


def _seconds(value):
    return "?" if value is None else f"{value:.1f} s"


def _timeout_message(usage):
    """Which limit stopped the task and what it used: a student (and an instructor) can tell an
    endless loop (CPU limit), a task that slept or blocked (wall clock), and a busy machine."""
    cpu, wall = _seconds(usage.get("cpu")), _seconds(usage.get("wall"))
    if usage.get("limit") == "wall":
        return (f"运行时间超过墙钟上限被终止：它在 {wall} 里只用了 {cpu} CPU 时间，大部分时间在睡眠或等待"
                "（sleep、input()、锁、读管道？）；其它练习不受影响。",
                f"stopped at the wall-clock cap: in {wall} it used only {cpu} of CPU time, so it was mostly "
                "sleeping or blocked (sleep, input(), a lock, a pipe?); other exercises are unaffected.")
    return (f"CPU 时间用完被终止：用了 {cpu} CPU 时间（墙钟 {wall}），可能是死循环或计算量过大；其它练习不受影响。",
            f"stopped at its CPU-time limit: it used {cpu} of CPU time ({wall} wall clock), an infinite loop or "
            "too much work?; other exercises are unaffected.")


def _judge_failure(result, reply):
    """Fill `result` for a task that produced no outputs; return whether it did."""
    if isinstance(reply, WorkerFailure):
        result.status, result.grader_fault = "error", True
        result.feedback_zh = f"评分工作进程失败：{reply}"
        result.feedback_en = f"the grading worker failed: {reply}"
        return True
    if reply["status"] == "timeout":
        result.status = "timeout"
        result.feedback_zh, result.feedback_en = _timeout_message(reply.get("usage") or {})
        return True
    if reply["status"] == "starved":
        result.status, result.grader_fault = "error", True
        usage = reply.get("usage") or {}
        runs = 1 + STARVED_RERUNS
        result.feedback_zh = (f"评分机器太忙：这一项运行了 {runs} 次，每次都在等待 CPU（最后一次等了 "
                              f"{_seconds(usage.get('waited'))}，只用了 {_seconds(usage.get('cpu'))} CPU 时间）。"
                              "这不是你的代码的问题；请老师在机器空闲时重新评分。")
        result.feedback_en = (f"the grading machine was too busy: this item ran {runs} times and waited for a CPU each "
                              f"time (the last run waited {_seconds(usage.get('waited'))} and used only "
                              f"{_seconds(usage.get('cpu'))} of CPU time). This is not your code's fault; it should "
                              "be graded again when the machine is idle.")
        return True
    if reply["status"] == "tampered":
        result.status = "error"
        result.feedback_zh = "你的代码改动了评分工作进程本身（资源限制或调度），这一项记 0 分。"
        result.feedback_en = "your code changed the grading worker itself (its limits or scheduling); this item scores 0."
        return True
    if reply["status"] == "malformed":
        result.status = "error"
        result.feedback_zh = f"评分器拒收了你的代码发回的结果：{reply['problem']}"
        result.feedback_en = f"the grader refused the reply your code sent back: {reply['problem']}"
        return True
    if reply["status"] != "ok":
        result.status = "error"
        result.feedback_zh = f"你的代码使进程异常退出或输出过大（{reply['status']}）。"
        result.feedback_en = f"your code crashed the process or produced too much output ({reply['status']})."
        return True
    failed = reply["payload"].get("failed")
    if failed:
        result.status = "error"
        tail = "\n".join(failed.get("traceback", failed.get("message", "")).strip().splitlines()[-6:])
        result.feedback_zh = f"无法导入你的 {registry.PACKAGE}：{failed.get('type', '')}: {failed.get('message', '')}\n{tail}"
        result.feedback_en = f"could not import your {registry.PACKAGE}: {failed.get('type', '')}: {failed.get('message', '')}\n{tail}"
        return True
    return False


# --- judging notebook answers ----------------------------------------------------------


def _as_comparable(value):
    """Student answers may be lists, tuples, tensors or numbers; compare them as float64 tensors."""
    if isinstance(value, (list, tuple)) and value and all(_both_numbers(v, 0.0) for v in value):
        return torch.tensor(value, dtype=torch.float64)
    if isinstance(value, torch.Tensor) and value.is_floating_point():
        return value.double().reshape(-1) if value.dim() else value.double()
    if _both_numbers(value, 0.0):
        return torch.tensor(float(value), dtype=torch.float64)
    return value


def _normalise_exact(value):
    if isinstance(value, dict):
        return {k: _normalise_exact(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_normalise_exact(v) for v in value]
    if isinstance(value, torch.Tensor):
        return value.tolist()
    return value


@lru_cache(maxsize=None)
def expected_answer(answer_id):
    answer = registry.assignment_of(answer_id).item(answer_id)
    return answer.expected(reference.load(answer.module))


def judge_answer(answer, max_score, notebook_reply, cells_problem, answer_cell=None):
    result = ItemResult(answer.id, "answer", answer.title_zh, answer.title_en, max_score)
    if cells_problem:
        result.status = "error"
        result.feedback_zh = result.feedback_en = cells_problem
        return result.finish()
    if _judge_failure(result, notebook_reply):
        return result.finish()
    body = notebook_reply["payload"]["body"]
    entry = body["values"].get(answer.variable, {"missing": True})
    failure = next((f for f in body["cell_failures"] if f["cell"] == answer_cell), None)
    placeholder = entry.get("raised", {}).get("kind") == "not_implemented"
    if placeholder or (entry.get("missing") and failure and failure["kind"] == "not_implemented"):
        result.status = "not_implemented"
        where_zh = f"第 {answer_cell + 1} 个单元格（从 1 数起）" if answer_cell is not None else "答案单元格"
        where_en = f"cell {answer_cell + 1} (counting from 1)" if answer_cell is not None else "the answer cell"
        result.feedback_zh = f"尚未作答：{where_zh}里的 {answer.variable} 还没有填写。"
        result.feedback_en = f"not answered yet: {answer.variable} in {where_en} is not filled in."
        return result.finish()
    if entry.get("missing"):
        where = _cell_failure(body, answer_cell)
        result.feedback_zh = f"变量 {answer.variable} 没有定义。{where[0]}"
        result.feedback_en = f"the variable {answer.variable} is not defined. {where[1]}"
        return result.finish()
    if "raised" in entry:
        result.feedback_zh = result.feedback_en = entry["raised"]["message"]
        return result.finish()
    got = probes.decode(entry["ok"])
    problem = _answer_problem(answer, got, expected_answer(answer.id))
    if problem:
        mistake = next((m for m, value in zip(answer.mistakes, mistake_values(answer.id))
                        if _answer_problem(answer, got, value) is None), None)
        if mistake is not None:  # a known wrong result: name it and the step to recheck
            problem = (f"可能的失误：{mistake.zh}", f"likely mistake: {mistake.en}")
    result.checks.append(Check(f"{answer.variable} is correct", problem is None, *(problem or ("", ""))))
    return result.finish()


@lru_cache(maxsize=None)
def mistake_values(answer_id):
    """The value each known mistake of the answer gives, in its order."""
    answer = registry.assignment_of(answer_id).item(answer_id)
    return [m.value(reference.load(answer.module)) for m in answer.mistakes]


def _answer_problem(answer, got, expected):
    """None when the student's answer matches `expected`; else a (zh, en) pair that names only
    what the student gave (for a dict, which keys differ), never the expected value."""
    if not answer.exact:
        return mismatch(_as_comparable(got), _as_comparable(expected))
    got, expected = _normalise_exact(got), _normalise_exact(expected)
    if got == expected:
        return None
    if isinstance(got, dict) and isinstance(expected, dict) and set(got) == set(expected):
        wrong = ", ".join(key for key in expected if got[key] != expected[key])
        return (f"这些键的值不对：{wrong}。", f"these keys have wrong values: {wrong}.")
    if isinstance(expected, dict) and isinstance(got, dict):
        return (f"键名应为 {', '.join(expected)}。", f"the keys should be {', '.join(expected)}.")
    return (f"你的结果 {_describe(got, 'zh')} 与参考答案不同。",
            f"your result {_describe(got, 'en')} differs from the reference answer.")


def _cell_failure(body, cell_index):
    """What went wrong in the answer's cell (or, failing that, the first cell that raised)."""
    failures = body["cell_failures"]
    failure = next((f for f in failures if f["cell"] == cell_index), failures[0] if failures else None)
    if failure is None:
        return ("", "")
    text = f"{failure.get('type', 'NotImplementedError')}: {failure['message']}"
    number = failure["cell"] + 1
    return (f"第 {number} 个单元格（从 1 数起）运行出错：{text}", f"cell {number} (counting from 1) raised {text}")


# --- the whole submission ---------------------------------------------------------------


class Grading:
    """Submissions graded as they come, in one pool: `submit` reads and plans a folder here and
    queues its tasks; the future it returns gives the report once the last task has replied.
    Tasks run in the order submitted, so a caller can prepare the next submission, or record an
    earlier one, while the workers grade.  `progress`: a bar to advance by one per submission
    graded."""

    def __init__(self, pool: WorkerPool, progress=None):
        self.pool, self.progress = pool, progress
        self._executor = concurrent.futures.ThreadPoolExecutor(max_workers=pool.size)
        self._lock = threading.Lock()

    def submit(self, folder, assignment_id=None, timeout=DEFAULT_TIMEOUT, only=None):
        plan = _plan(Path(folder), assignment_id, timeout, only)
        tasks = list(plan["tasks"].values())
        result, replies, left = concurrent.futures.Future(), {}, [len(tasks)]

        def judge():
            try:
                result.set_result(_judge(plan, replies, self.pool))
            except BaseException as exc:  # the caller sees it where it asks for the report
                result.set_exception(exc)
            if self.progress is not None:
                with self._lock:
                    self.progress.update(1)

        def replied(key, running):
            replies[key] = running.result()  # _safe_run returns its failures; it never raises
            with self._lock:
                left[0] -= 1
                last = left[0] == 0
            if last:
                judge()

        if not tasks:
            judge()
        for task in tasks:
            self._executor.submit(_safe_run, self.pool, task).add_done_callback(
                lambda running, key=task["key"]: replied(key, running))
        return result

    def close(self, cancel=False):
        """Wait for every task queued; `cancel`: drop those not yet started."""
        self._executor.shutdown(wait=True, cancel_futures=cancel)

    def __enter__(self):
        return self

    def __exit__(self, kind, *exc):
        self.close(cancel=kind is not None)


def grade_many(folders, assignment_id=None, pool: Optional[WorkerPool] = None, timeout=DEFAULT_TIMEOUT,
               show_progress=False, only=None, progress=None):
    """Grade several submission folders with one pool; tasks of all folders run concurrently.

    Every folder gets a report: a submission that cannot be read, or whose replies cannot
    be judged, loses its own points and says why; the others are graded as usual.
    `assignment_id`: one id for every folder, or a list of one per folder (the caller's choice;
    None lets the registry tell it, refusing a folder that fits several).  `only`: a list, one per
    folder, of the exercise ids to grade (a mutant is graded on its own exercise alone; the report
    then holds only those items and no answers), or None for everything.  `progress`: a caller's
    bar to advance by one per folder graded instead of a bar of its own."""
    from .progress import bar

    own_pool = pool is None
    pool = pool or WorkerPool()
    try:
        ids = list(assignment_id) if isinstance(assignment_id, (list, tuple)) else [assignment_id] * len(folders)
        wanted = list(only) if only is not None else [None] * len(folders)
        if len(ids) != len(folders) or len(wanted) != len(folders):
            raise ValueError("one assignment id and one exercise list per folder")
        shown = progress if progress is not None else bar(len(folders), f"grading {len(folders)} submission(s)",
                                                          unit="submission", shown=show_progress)
        with (contextlib.nullcontext(shown) if progress is not None else shown), Grading(pool, shown) as grading:
            futures = [grading.submit(folder, ident, timeout, exercises)
                       for folder, ident, exercises in zip(folders, ids, wanted)]
            return [future.result() for future in futures]
    finally:
        if own_pool:
            pool.close()


def grade(folder, assignment_id=None, pool=None, timeout=DEFAULT_TIMEOUT):
    return grade_many([folder], assignment_id, pool, timeout)[0]


def _safe_run(pool, task):
    """The task's reply as {"status", "payload", "output_tail"}, its payload checked against the
    schema, or the WorkerFailure that lost it."""
    reruns = []
    try:
        try:
            status, data, output, usage = pool.run(task)
        except WorkerFailure:
            # the trusted worker itself died or hung (killed from outside, say): the pool has
            # replaced it, and the task runs once more before it is reported lost
            status, data, output, usage = pool.run(task)
        while status == "starved" and len(reruns) < STARVED_RERUNS:
            reruns.append(usage)
            status, data, output, usage = pool.run(task)
    except WorkerFailure as exc:
        return exc
    reply = {"status": status, "output_tail": output, "devices": pool.devices, "usage": usage, "reruns": reruns}
    if status != "ok":
        return reply
    if not data:
        reply["status"] = "crashed"  # ended without a word: killed by a signal, out of memory...
        return reply
    try:
        payload = wire.parse_reply(data)
        body = payload.get("body")
        if body is not None and ("outputs" in body) != (task["kind"] == "exercise"):
            raise ValueError("the reply answers another kind of task")
        reply["payload"] = payload
    except ValueError as exc:
        reply.update(status="malformed", problem=str(exc))
    return reply


def _plan(folder: Path, assignment_id, timeout, only=None):
    assignment = registry.find_assignment(folder, assignment_id)
    exercises = [e for e in assignment.exercises if only is None or e.id in only]
    # the folder's other assignments' notebooks are never read: it is graded as `assignment`
    problems, refused_files, refused_notebook = registry.identity_problems(folder, assignment), [], []
    try:
        with safefiles.Folder(folder) as opened:
            files = read_package(opened, problems, refused_files)
            cells, answer_cells = (read_notebook_cells(opened, assignment.notebook_name, problems, refused_notebook)
                                   if only is None else (None, {}))
    except OSError as exc:  # the folder itself cannot be opened
        problems.append(f"the submission folder could not be read: {exc.strerror}")
        files, cells, answer_cells = {}, None, {}
    tasks = {}
    for exercise in exercises:
        cases = {name: {k: probes.encode(v) for k, v in case.items()} for name, case in cases_of(exercise.id).items()}
        tasks[exercise.id] = {"key": secrets.token_hex(8), "kind": "exercise", "exercise": exercise.id,
                              "probes": assignment.id, "probes_source": probes_source(assignment.id),
                              "module": exercise.module,
                              "files": files, "cases": cases, "timeout": timeout,
                              "forbids": [dataclasses.asdict(entry) for entry in exercise.forbids]}
    if cells is not None:
        # the notebook runs top to bottom once, with a time budget for all its cells
        tasks["notebook"] = {"key": secrets.token_hex(8), "kind": "notebook", "files": files, "cells": cells,
                             "variables": [a.variable for a in assignment.answers], "cell_timeout": timeout,
                             "cell_wall": wall_cap(timeout),
                             "timeout": 3 * timeout}
    return {"folder": folder, "assignment": assignment, "exercises": exercises, "problems": problems, "tasks": tasks,
            "reaches": reaches_by_exercise(files, assignment),
            "answers": assignment.answers if only is None else (),
            "answer_cells": answer_cells, "refused": {"exercise": refused_files, "answer": refused_notebook}}


def _judge_safely(kind, entry, max_score, judge, *args):
    """An error while judging costs that item and is reported; it never ends the run."""
    try:
        with _REFERENCE_IN_USE:
            return judge(entry, max_score, *args)
    except Exception as exc:
        item = ItemResult(entry.id, kind, entry.title_zh, entry.title_en, max_score)
        item.status = "error"
        where = traceback.extract_tb(exc.__traceback__)[-1]
        item.feedback_zh = f"评分器在评判这一项时出错（{type(exc).__name__}）；这一项记 0 分并已报告。"
        item.feedback_en = (f"the grader failed while judging this item ({type(exc).__name__} at "
                            f"{Path(where.filename).name}:{where.lineno}); it scores 0 and is reported.")
        return item.finish()


def _judge(plan, replies, pool):
    assignment, points = plan["assignment"], plan["assignment"].points()
    devices = set()
    items = []
    problems = list(plan["problems"])
    for exercise in plan["exercises"]:
        reply = replies[plan["tasks"][exercise.id]["key"]]
        items.append(_judge_safely("exercise", exercise, points[exercise.id], judge_exercise, reply, devices,
                                   plan["reaches"][exercise.id]))
    notebook_task = plan["tasks"].get("notebook")
    cells_problem = None if notebook_task else next(
        (p for p in plan["problems"] if assignment.notebook_name in p), "notebook missing")
    notebook_reply = replies[notebook_task["key"]] if notebook_task else None
    for answer in plan["answers"]:
        cell = plan["answer_cells"].get(answer.id)
        items.append(_judge_safely("answer", answer, points[answer.id], judge_answer, notebook_reply, cells_problem,
                                   cell))
    for name, task in plan["tasks"].items():
        reply = replies[task["key"]]
        for usage in reply.get("reruns", []) if isinstance(reply, dict) else []:
            problems.append(f"{name} was run again: it waited {_seconds(usage.get('waited'))} for a CPU in "
                            f"{_seconds(usage.get('wall'))} and used {_seconds(usage.get('cpu'))} (the machine was busy)")
        payload = reply.get("payload", {}) if isinstance(reply, dict) else {}
        for problem in payload.get("body", payload).get("load_problems", []):
            if problem not in problems:
                problems.append(problem)
    for item in items:
        # a refused notebook costs the answers, a refused package file the exercises
        refused = plan["refused"][item.kind]
        if item.status != "passed" and refused:
            item.feedback_zh += "\n提交中被拒绝的文件：" + "；".join(refused)
            item.feedback_en += "\nrefused in the submission: " + "; ".join(refused)
    for item in items:  # student text reaches terminals, markdown and HTML: no control characters
        item.feedback_zh, item.feedback_en, item.output = map(printable, (item.feedback_zh, item.feedback_en, item.output))
        for check in item.checks:
            check.zh, check.en = printable(check.zh), printable(check.en)
    order = list(points)  # the grade cells' order in the notebook
    items.sort(key=lambda item: order.index(item.id))
    return Report(assignment.id, str(plan["folder"]), pool.isolation, sorted(devices) or ["cpu"], items,
                  [printable(problem) for problem in problems], pool.limits)


printable = report.printable  # student text as every front end may show it (one definition, in report.py)

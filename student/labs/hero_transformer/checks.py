"""Visible checks: properties of chapter 5 that you can test on your own code.

Each ``judge_*`` function looks at outputs only and returns ``None`` when the
property holds, or a ``(中文, English)`` pair that says what is wrong.  The
``check_*`` functions run your code on small inputs, apply the judges and
fail with the message and the one line of your code it points to (Python's
whole traceback, through this module too, after ``show_tracebacks()`` or with
HERO_TRACEBACK=1).  Each check exercises one exercise: the parts of the
chapter it would call besides are test doubles here, so a check never waits
for another exercise.  An exercise that is still a stub is not an error: the
check says so on stderr and returns, so Run All goes on (and nbgrader's
Validate, which counts stderr, still lists it as not done).  The autograder
applies the same judges to the outputs of your code in its own process.
"""

import ast
import contextlib
import functools
import linecache
import os
import sys
import textwrap
import types
from pathlib import Path

import torch
from torch import nn

# One tolerance for every float comparison in this course: float32 outputs,
# reductions in any order, float64 computed and cast back, or CUDA without TF32
# all agree with the reference to about 1e-6 relative; the closest misconception
# the grader knows (tanh-GELU) is 4.7e-4 away (docs/grading.md).
TOLERANCE = {"rtol": 1e-4, "atol": 1e-5}


def _close(a, b):
    return a.shape == b.shape and torch.allclose(a.double(), b.double(), **TOLERANCE)


def judge_same_shape(x, y):
    if not isinstance(y, torch.Tensor):
        return (f"应返回张量，实际返回了 {type(y).__name__}。", f"expected a tensor, got {type(y).__name__}.")
    if y.shape != x.shape:
        return (
            f"输出形状 {tuple(y.shape)} 与输入形状 {tuple(x.shape)} 不同；块和子层都应保持 [B, T, d]。",
            f"output shape {tuple(y.shape)} differs from input shape {tuple(x.shape)}; [B, T, d] must be kept.",
        )
    return None


def judge_identity(x, y):
    """With both branches returning zero, a pre-LN block is exactly the identity."""
    if y.shape != x.shape or not torch.equal(y, x):
        return (
            "两条分支都输出零时，pre-LN 块应严格等于输入 X；"
            "若输出被标准化了，多半是把 LayerNorm 放到了残差相加之后（post-LN）。",
            "with both branches returning zero the pre-LN block must return X exactly; "
            "a normalised output usually means LayerNorm sits after the residual addition (post-LN).",
        )
    return None


def judge_causal(y, y_changed, first_changed):
    """Changing positions >= first_changed must leave earlier outputs unchanged."""
    if not _close(y[:, :first_changed], y_changed[:, :first_changed]):
        return (
            "只改变了未来位置的输入，过去位置的输出却变了：有信息从未来泄漏。"
            "检查是否沿时间轴做了统计，或把某个 [B,1,d] 的量广播到所有位置。",
            "changing only future inputs changed earlier outputs: information leaks from the future. "
            "Look for statistics over the time axis or a [B,1,d] tensor broadcast to every position.",
        )
    return None


def judge_shift_invariant(y, y_shifted):
    if not _close(y, y_shifted):
        return (
            "给一个位置的所有特征加同一个常数，LayerNorm 的输出应不变（均值随之平移，中心化坐标不变）。",
            "adding one constant to every feature of a position must not change LayerNorm's output.",
        )
    return None


def judge_normalised_stats(x, y, eps=1e-5):
    """Default gamma/beta: each position has mean 0 and variance v / (v + eps)."""
    variance = x.double().var(dim=-1, unbiased=False)
    expected = variance / (variance + eps)
    mean = y.double().mean(dim=-1)
    got = y.double().var(dim=-1, unbiased=False)
    if not torch.allclose(mean, torch.zeros_like(mean), **TOLERANCE):
        return ("默认 gamma=1、beta=0 时，每个位置输出的均值应为 0。", "with gamma=1, beta=0 each position must have mean 0.")
    if not torch.allclose(got, expected, **TOLERANCE):
        return (
            "默认 gamma=1、beta=0 时，每个位置输出的人口方差应为 v/(v+eps)（除以 d，不是 d-1）。",
            "with gamma=1, beta=0 each position's population variance must be v/(v+eps) (divide by d, not d-1).",
        )
    return None


def judge_gelu_symmetry(a, g_a, g_minus_a):
    """Phi(-a) = 1 - Phi(a) gives g(a) - g(-a) = a.  ReLU passes this too."""
    if not torch.allclose((g_a - g_minus_a).double(), a.double(), **TOLERANCE):
        return (
            "GELU 应满足 g(a) - g(-a) = a（由 Phi(-a) = 1 - Phi(a) 得出）；你的实现不满足。",
            "GELU must satisfy g(a) - g(-a) = a (from Phi(-a) = 1 - Phi(a)); yours does not.",
        )
    return None


def judge_ledger(formula, registered):
    """The count is not shown: it is what the notebook asks the student to compute."""
    if formula != registered:
        return (
            f"参数账本给出 {formula}，与模型实际注册的参数个数不一致。"
            "逐项核对：4d^2（Q/K/V/O）、2df + f + d（FFN 权重与偏置）、4d（两套 LayerNorm）、"
            "2Vd（嵌入与未绑定的 head）、Cd（位置表）、2d（final LayerNorm）。",
            f"the ledger gives {formula}, which is not the number of parameters the model registers. "
            "Check each term: 4d^2 (Q/K/V/O), 2df + f + d (FFN weights and biases), 4d (two LayerNorms), "
            "2Vd (embedding and the untied head), Cd (position table), 2d (final LayerNorm).",
        )
    return None


# --- checks you run in the notebook ------------------------------------------


def _model():
    from hero_transformer import model

    return model


def _raise_if(problem):
    if problem is not None:
        raise AssertionError(problem[0] + "\n(" + problem[1] + ")")


def _not_implemented(stub, check, module):
    where = f" hero_transformer/{module}.py 里的它" if stub == check else "它"
    print(f"· 尚未实现：练习 {stub} 还是 raise NotImplementedError('{stub}')"
          + ("" if stub == check else "（这个检查要用到它）") + f"。完成{where}并保存，"
          f"再运行这个单元格。\n  (not implemented yet: exercise {stub} is still a stub"
          + ("" if stub == check else ", and this check needs it") + ")", file=sys.stderr)


# --- how a failing check speaks: its message and the one line of your code it points to ---------

PACKAGE_DIR = Path(__file__).resolve().parent
TRACEBACK_SWITCH = "HERO_TRACEBACK"  # HERO_TRACEBACK=1: failing checks show Python's whole traceback
_show_whole = False  # set by show_tracebacks()


def show_tracebacks(on=True):
    """From now on a failing visible check shows Python's whole traceback, the checks' own frames
    included, instead of its short message; show_tracebacks(False) goes back."""
    global _show_whole
    _show_whole = bool(on)


def _whole_tracebacks():
    return _show_whole or os.environ.get(TRACEBACK_SWITCH, "") not in ("", "0")


class CheckFailed(AssertionError):
    """A failed visible check in IPython or Jupyter.  IPython shows an exception that has
    `_render_traceback_` through it instead of a traceback, so the cell's error output is the
    message alone, and the cell still fails (nbgrader's Validate and Run All see the error)."""

    def __init__(self, message):
        super().__init__(message)

    def _render_traceback_(self):
        return str(self).splitlines()


def _ipython():
    """The running IPython shell, or None (this never imports IPython)."""
    ipython = sys.modules.get("IPython")
    return ipython.get_ipython() if ipython is not None else None


def _yours(filename):
    """A file of your package that is not a checks module."""
    path = Path(filename).resolve()
    return path.parent == PACKAGE_DIR and path.stem != "checks" and not path.stem.endswith("_checks")


def _definition(module, target):
    """(file, `def` line, last line) of `target` (say "TransformerBlock.forward") in the current text of
    hero_transformer/<module>.py.  Read from the file: after IPython's autoreload, code objects may
    count their lines from elsewhere."""
    path = PACKAGE_DIR / f"{module}.py"
    body = ast.parse(path.read_text(encoding="utf-8")).body
    for name in target.split("."):
        node = next(n for n in body if isinstance(n, (ast.ClassDef, ast.FunctionDef)) and n.name == name)
        body = node.body
    return str(path), node.lineno, node.end_lineno


def _definition_or_none(module, target):
    try:
        return _definition(module, target)
    except Exception:  # noqa: BLE001 - a pointer we cannot find is left out, never a second error
        return None


def _codes(code):
    """`code` and every code object nested in it."""
    todo, found = [code], []
    while todo:
        found.append(todo.pop())
        todo.extend(c for c in found[-1].co_consts if isinstance(c, types.CodeType))
    return found


AUTORELOAD_CLASS = "__autoreload_class__"  # the class IPython's autoreload compiles a changed method in


def _line_in_file(code, offset):
    """The line of the file's current text that runs instruction `offset` of `code`, or None when
    that text no longer holds this code (the file changed since it was loaded).

    A traceback's own line can be wrong here: IPython's autoreload (9.x) recompiles a changed
    function from its unparsed text alone (a method inside a class of its own), so that code counts
    its lines from 1.  Such code is compiled again the same way from the file's text, and the
    statement it runs is found at the same place in the file's syntax tree."""
    try:
        text = Path(code.co_filename).read_text(encoding="utf-8")
        tree = ast.parse(text)
        for candidate in _codes(compile(tree, code.co_filename, "exec")):  # code loaded from the file itself
            if candidate.co_qualname == code.co_qualname and candidate.co_code == code.co_code:
                return next((line for start, end, line in candidate.co_lines() if start <= offset < end), None)
        qualname = code.co_qualname.removeprefix(AUTORELOAD_CLASS + ".")
        method, outer = qualname != code.co_qualname, qualname.partition(".")[0]
        line = next((line for start, end, line in code.co_lines() if start <= offset < end), None)
        for node in ast.walk(tree):
            if not (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == outer):
                continue
            snippet = textwrap.dedent(ast.unparse(node))
            if method:
                snippet = f"class {AUTORELOAD_CLASS}:\n" + textwrap.indent(snippet, "    ")
            copy = ast.parse(snippet)
            compiled = compile(copy, code.co_filename, "exec", dont_inherit=True)
            if any(c.co_qualname == code.co_qualname and c.co_code == code.co_code for c in _codes(compiled)):
                copied = copy.body[0].body[0] if method else copy.body[0]
                return next((a.lineno for a, b in zip(ast.walk(node), ast.walk(copied))
                             if isinstance(b, ast.stmt) and b.lineno == line), None)
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
        pass
    return None


def _your_frames(tb):
    """(file, line or None) of each frame of your code in a traceback, innermost last."""
    frames = []
    while tb is not None:
        code = tb.tb_frame.f_code
        if _yours(code.co_filename):
            frames.append((code.co_filename, _line_in_file(code, tb.tb_lasti)))
        tb = tb.tb_next
    return frames


def _same_file(a, b):
    return Path(a).resolve() == Path(b).resolve()


def _pointer(filename, line):
    linecache.checkcache(filename)  # the file may have been edited and reloaded since
    source = linecache.getline(filename, line).strip()
    try:
        shown = Path(filename).resolve().relative_to(PACKAGE_DIR.parent).as_posix()
    except ValueError:
        shown = filename
    return f"  → {shown}:{line}  {source}"


def _short(exc):
    first = (str(exc).strip().splitlines() or [""])[0][:300]
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


def _failure_text(exc, module, target):
    """What a failing check says: its words (zh, then en), the line of your code it points to (the
    innermost frame of yours for an error your code raised; the exercise's `def` for a wrong
    result), and how to see the whole traceback."""
    frames = _your_frames(exc.__traceback__)
    definition = _definition_or_none(module, target)
    if definition is not None:  # the exercise's own lines first, then its module's, then the package's
        file, first, last = definition
        inside = [f for f in frames if _same_file(f[0], file) and f[1] is not None and first <= f[1] <= last]
        frames = inside or [f for f in frames if Path(f[0]).stem == module] or frames
    if frames:
        said = f"你的代码抛出了 {_short(exc)}", f"your code raised {_short(exc)}"
        where = frames[-1] if frames[-1][1] is not None else definition and definition[:2]
    else:
        where = definition and definition[:2]
        if isinstance(exc, AssertionError):  # a judge's verdict on what your code returned
            zh, _, en = str(exc).partition("\n")
            said = zh, en.strip().removeprefix("(").removesuffix(")")
        else:
            said = (f"检查调用你的 {target} 或读它的结果时出错：{_short(exc)}（多半是参数或返回值的类型、形状不对）",
                    f"the check failed calling your {target} or reading its result: {_short(exc)} (most likely "
                    "the arguments or the returned value have the wrong type or shape)")
    return "\n".join([f"✗ 可见检查未通过：{said[0]}"] + ([f"  ({said[1]})"] if said[1] else [])
                     + ([_pointer(*where)] if where else []) + [
        f"  （完整调用栈：运行 checks.show_tracebacks() 后重跑，或设环境变量 {TRACEBACK_SWITCH}=1；"
        f"full traceback: checks.show_tracebacks() or {TRACEBACK_SWITCH}=1）"])


def visible_check(exercise, module="model", *, target):
    """A check of `exercise`, the stub in `target` (its qualified name) in hero_transformer/<module>.py.
    A stub it meets is reported in one line; any failure, as its message and the one line of your
    code it points to (an AssertionError; in IPython one whose error output is that text alone)."""
    def wrap(check):
        @functools.wraps(check)
        def run():
            try:
                return check()
            except Exception as exc:
                if isinstance(exc, NotImplementedError) and str(exc).isidentifier():  # a stub's own message
                    _not_implemented(str(exc), exercise, module)
                    return None
                if _whole_tracebacks():
                    raise
                text = _failure_text(exc, module, target)
            raise (CheckFailed if _ipython() is not None else AssertionError)(text) from None
        run.exercise, run.module, run.target = exercise, module, target
        return run
    return wrap


@contextlib.contextmanager
def standing_in(owner, **doubles):
    """Run with attributes of `owner` (a module of your package) replaced by test doubles, put back
    afterwards whatever happens: a check exercises its own exercise, not the ones it would call."""
    missing = object()
    saved = {name: getattr(owner, name, missing) for name in doubles}
    for name, double in doubles.items():
        setattr(owner, name, double)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is missing:
                delattr(owner, name)
            else:
                setattr(owner, name, value)


class Counted(nn.Module):
    """A test double: `function` as a module, with a count of its calls."""

    def __init__(self, function):
        super().__init__()
        self.function, self.calls = function, 0

    def forward(self, *args, **kwargs):
        self.calls += 1
        return self.function(*args, **kwargs)


# --- answers -------------------------------------------------------------------------------


_said_after_cell = []  # pass lines waiting for the end of the current IPython cell


def _say_after_this_cell(line):
    """In IPython, print `line` once the running cell has finished without an error (in that cell's
    output); elsewhere nothing: a script or the grader learns nothing from it."""
    shell = _ipython()
    if shell is None:
        return
    pending = _said_after_cell
    if not pending:
        def say(result):
            shell.events.unregister("post_run_cell", say)
            lines = pending[:]
            pending.clear()
            if result.success:
                print("\n".join(lines))
        shell.events.register("post_run_cell", say)
    pending.append(line)


def answered(name, value):
    """False (and a one-line note) while an answer cell still holds its placeholder `...`.  True
    otherwise; in IPython the cell then ends with one line saying that its form checks passed."""
    if value is ...:
        print(f"· 尚未作答：把答案单元格里 {name} = ... 的 ... 换成你的计算，再运行这个单元格。"
              f"\n  (not answered yet: replace the ... in {name} = ...)", file=sys.stderr)
        return False
    _say_after_this_cell(f"✓ {name}：形式正确（数值由隐藏测试核对）  ({name}: the form is right; the hidden tests "
                         "check the value)")
    return True


def _passed(what):
    # never "all tests passed": these are the visible checks, the hidden ones run after submission
    print(f"✓ 可见检查通过：{what}。这不是最终成绩，提交后还会运行隐藏测试。"
          f"\n  (visible checks passed; hidden tests run after you submit)")


def _small_config(model):
    return model.Config(vocab_size=10, block_size=6, d_model=4, n_heads=2, n_layers=2, d_ff=8, dropout=0.0)


@visible_check("layer_norm", target="LayerNorm.forward")
def check_layer_norm():
    model = _model()
    torch.manual_seed(0)
    x = 3 * torch.randn(2, 3, 4) + 1
    norm = model.LayerNorm(4)
    with torch.no_grad():
        y, y_shifted = norm(x), norm(x + 7.5)
    _raise_if(judge_same_shape(x, y))
    _raise_if(judge_normalised_stats(x, y, norm.eps))
    _raise_if(judge_shift_invariant(y, y_shifted))
    _passed("LayerNorm：形状、均值 0、方差 v/(v+eps)、平移不变")


@visible_check("gelu", target="gelu")
def check_gelu():
    model = _model()
    a = torch.tensor([0.3, 1.0, 2.5])
    _raise_if(judge_gelu_symmetry(a, model.gelu(a), model.gelu(-a)))
    negative = model.gelu(torch.tensor([-1.0]))
    if not negative.item() < 0:
        raise AssertionError("GELU 对负输入应给出小的负值，而不是 0（那是 ReLU）。\n(GELU of a negative input is slightly negative, not 0.)")
    _passed("GELU：对称恒等式 g(a)-g(-a)=a 成立，负输入给出负值（ReLU 也能通过对称恒等式，数值要靠隐藏测试核对）")


def _feedforward_doubles(ffn):
    """FeedForward with doubles for the parts that are other exercises or random: activation sin
    (not your gelu), dropout x -> 2x (so the check sees where it acts)."""
    ffn.activation, ffn.dropout = Counted(torch.sin), Counted(lambda t: 2 * t)
    return ffn


@visible_check("feedforward", target="FeedForward.forward")
def check_feedforward():
    model = _model()
    torch.manual_seed(0)
    ffn = _feedforward_doubles(model.FeedForward(_small_config(model)).eval())
    x = torch.randn(2, 3, 4)
    x_changed = x.clone()
    x_changed[:, 2] += 1.0
    with torch.no_grad():
        y, y_changed = ffn(x), ffn(x_changed)
        parts = 2 * ffn.fc2(torch.sin(ffn.fc1(x)))
    _raise_if(judge_same_shape(x, y))
    _raise_if(judge_causal(y, y_changed, 2))
    _raise_if(judge_feedforward_parts(y, parts))
    _passed("FeedForward：形状保持，逐位置计算，依次用上 fc1、activation、fc2、dropout（activation 与 dropout 用的是替身）")


# the block's doubles: LN1 x -> 2x + 1, LN2 x -> x - 3, attention a causal prefix mean with a cache,
# FFN x -> tanh(x) + 1: distinct, so each wire of U = X + A(LN1(X)), Y = U + F(LN2(U)) shows


def prefix_mean_attention(x, past_key_value=None, use_cache=False):
    """Attention's double: position t receives the mean of positions 0..t (the cached ones first);
    present is (everything seen, everything seen)."""
    seen = x if past_key_value is None else torch.cat([past_key_value[0], x], dim=1)
    counts = torch.arange(1, seen.shape[1] + 1, dtype=x.dtype, device=x.device)
    means = seen.cumsum(dim=1) / counts[:, None]
    return means[:, seen.shape[1] - x.shape[1]:], ((seen, seen) if use_cache else None)


def zero_attention(x, past_key_value=None, use_cache=False):
    """Attention's double that adds nothing."""
    return torch.zeros_like(x), None


def _block_doubles(block, attention=prefix_mean_attention, feedforward=lambda t: torch.tanh(t) + 1):
    block.ln_attention, block.ln_feedforward = Counted(lambda t: 2 * t + 1), Counted(lambda t: t - 3)
    block.attention, block.feedforward = Counted(attention), Counted(feedforward)
    return block


def _wired_with_doubles(x):
    """U = X + A(LN1(X)), Y = U + F(LN2(U)), computed with the block's doubles."""
    u = x + prefix_mean_attention(2 * x + 1)[0]
    return u + torch.tanh(u - 3) + 1


def judge_returns_pair(out):
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        return ("TransformerBlock.forward 应返回两项 (hidden, present)：present 是注意力给出的那一项（KV cache），"
                "不用缓存时为 None。",
                "TransformerBlock.forward returns two items, (hidden, present): present is the one attention "
                "returns (the KV cache), None without a cache.")
    return None


def judge_feedforward_parts(y, parts):
    if not _close(y, parts):
        return ("把 self.activation 换成 sin、self.dropout 换成乘 2 的替身后，输出与依次经过 self.fc1、self.activation、"
                "self.fc2、self.dropout 的结果不同：四个子模块都要用上（调用 self.activation，不要直接调用 gelu），"
                "按这个顺序，偏置也要保留。",
                "with self.activation replaced by sin and self.dropout by a double that doubles its input, the output "
                "differs from self.fc1, self.activation, self.fc2 and self.dropout applied in turn: use all four "
                "(call self.activation, not gelu directly), in this order, biases kept.")
    return None


def judge_wiring(y, wired, mode_zh="", mode_en=""):
    if not _close(y, wired):
        return (f"{mode_zh}用替身代替子层（LN1: 2x+1，LN2: x-3，注意力：因果前缀平均，FFN: tanh(x)+1）后，"
                "输出应恰为 U = X + A(LN1(X))，Y = U + F(LN2(U))。检查：LN2 读的是 U 而不是 X；"
                "两个分支的输出都加回残差、各加一次；两套 LayerNorm 各用各的；残差主路上不加 dropout。",
                f"{mode_en}with doubles for the sublayers (LN1: 2x+1, LN2: x-3, attention: a causal prefix mean, "
                "FFN: tanh(x)+1) the output must be exactly U = X + A(LN1(X)), Y = U + F(LN2(U)). Check that LN2 "
                "reads U, not X; that each branch's output is added to the residual once; that each LayerNorm is "
                "its own; and that no dropout sits on the residual stream.")
    return None


def judge_calls_once(calls):
    """{part: how many times one forward called it}: each part once."""
    twice = [name for name, count in calls.items() if count != 1]
    if twice:
        return (f"一次 forward 里这些子模块没有恰好各调用一次：{', '.join(twice)}。注意力一次调用就同时返回 "
                "(增量, present)：调用一次再拆开。",
                f"one forward did not call each of these exactly once: {', '.join(twice)}. One call of attention "
                "returns both (increment, present): call it once and unpack.")
    return None


def judge_present_passed(present, expected):
    """The block returns the present its attention gave (None without a cache)."""
    same = present is None if expected is None else (
        isinstance(present, (tuple, list)) and len(present) == len(expected)
        and all(isinstance(a, torch.Tensor) and _close(a, b) for a, b in zip(present, expected)))
    if not same:
        return ("返回的 present 应是注意力这一次调用给出的 present（use_cache=False 时为 None），"
                "而不是传入的 past_key_value、也不能丢掉；past_key_value 和 use_cache 要原样交给注意力。",
                "the present returned must be the one this call of attention gave (None with use_cache=False), "
                "neither the incoming past_key_value nor dropped; pass past_key_value and use_cache on to attention.")
    return None


def judge_cached_block(full, pieces):
    if not _close(full, pieces):
        return ("先算前两个位置（use_cache=True），再把第三个位置连同返回的 present 送进去，结果应与一次算完整段相同："
                "past_key_value 要交给注意力。",
                "the first two positions (use_cache=True) and then the third with the returned present must give "
                "what the whole sequence gets at once: pass past_key_value on to attention.")
    return None


@visible_check("block", target="TransformerBlock.forward")
def check_block():
    model = _model()
    cfg = _small_config(model)
    torch.manual_seed(0)
    x = torch.randn(2, 3, 4)
    x_changed = x.clone()
    x_changed[:, 2] = torch.randn(2, 4)
    with torch.no_grad():
        out = _block_doubles(model.TransformerBlock(cfg).eval())(x)
        _raise_if(judge_returns_pair(out))
        _raise_if(judge_same_shape(x, out[0]))
        zero = _block_doubles(model.TransformerBlock(cfg).eval(), zero_attention, torch.zeros_like)
        _raise_if(judge_identity(x, zero(x)[0]))
        block = _block_doubles(model.TransformerBlock(cfg).eval())
        y, present = block(x)
        _raise_if(judge_same_shape(x, y))
        _raise_if(judge_causal(y, block(x_changed)[0], 2))
        _raise_if(judge_wiring(y, _wired_with_doubles(x)))
        _raise_if(judge_present_passed(present, None))
        parts = {name: getattr(block, name) for name in ("ln_attention", "attention", "ln_feedforward", "feedforward")}
        for part in parts.values():
            part.calls = 0
        y, present = block(x, None, True)
        _raise_if(judge_calls_once({name: part.calls for name, part in parts.items()}))
        _raise_if(judge_present_passed(present, prefix_mean_attention(2 * x + 1, None, True)[1]))
        head, past = block(x[:, :2], None, True)
        tail, _ = block(x[:, 2:], past, True)
        _raise_if(judge_cached_block(y, torch.cat([head, tail], dim=1)))
        block.train()  # the doubles draw nothing: training mode must give the same output
        _raise_if(judge_wiring(block(x)[0], _wired_with_doubles(x), "训练模式下，", "in training mode, "))
    _passed("TransformerBlock：形状 [2,3,4] 保持，因果，分支为零时严格恒等；用替身代替子层时恰为 "
            "U = X + A(LN1(X))、Y = U + F(LN2(U))，每个子层各调用一次，present 与 KV cache 原样传递")


@visible_check("parameter_count", target="parameter_count")
def check_ledger():
    model = _model()
    for V, C, N, d, h, f in ((32, 64, 2, 64, 4, 256), (10, 6, 2, 4, 2, 8)):
        lm = model.TransformerLM(model.Config(V, C, d, h, N, f, 0.0))
        registered = sum(p.numel() for p in lm.parameters())
        _raise_if(judge_ledger(model.parameter_count(V, C, N, d, f), registered))
    _passed("参数账本与模型注册的参数数量一致")

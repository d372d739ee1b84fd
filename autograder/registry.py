"""Which assignments exist, which exercises and answers each grades, and their points.

Points live once, in the nbgrader metadata of the assignment's source
notebook (course/<assignment>/<assignment>.ipynb): nbgrader needs them there,
and this module reads them from there.  A test checks that every grade cell
has an entry here and every entry has a grade cell.
"""

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable, Optional

import torch

REPO_ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "hero_transformer"
# nbgrader's directories under the course root (the repository)
SOURCE_DIR, RELEASE_DIR, SOLUTION_DIR = "course", "student", "solutions"
COURSE_DIR = REPO_ROOT / SOURCE_DIR


@dataclass(frozen=True)
class Forbidden:
    """A shortcut the chapter forbids in an exercise, and how the grader sees it being taken:
    the aten operators it runs (whatever the route: an alias, getattr, an import inside the
    function, torch.ops), or the construction of any nn.Module during the call."""

    call: str  # the call as the feedback names it
    ops: tuple = ()
    builds_modules: bool = False


@dataclass(frozen=True)
class Exercise:
    """A stub in the package: `raise NotImplementedError('<id>')` in `target`."""

    id: str
    chapter: int
    target: str  # qualified name inside hero_transformer/model.py
    title_zh: str
    title_en: str
    forbids: tuple = ()


@dataclass(frozen=True)
class Answer:
    """A value a student computes in an answer cell of the notebook."""

    id: str  # the grade_id of the hidden-test cell
    variable: str
    title_zh: str
    title_en: str
    expected: Callable  # (reference model module) -> the expected value
    exact: bool = False  # integers and shapes compare exactly


@dataclass(frozen=True)
class Assignment:
    id: str
    chapter: int
    exercises: tuple
    answers: tuple

    @property
    def notebook_name(self):
        return f"{self.id}.ipynb"

    @property
    def source_notebook(self):
        return COURSE_DIR / self.id / self.notebook_name

    def points(self):
        return grade_cell_points(self.source_notebook)

    def item(self, item_id):
        for entry in self.exercises + self.answers:
            if entry.id == item_id:
                return entry
        raise KeyError(item_id)


BUILT_IN_NORMS = ("native_layer_norm", "native_group_norm", "native_batch_norm", "_native_batch_norm_legit",
                  "_native_batch_norm_legit_no_training")
EXERCISES = (
    Exercise("layer_norm", 5, "LayerNorm.forward", "逐位置 LayerNorm", "per-position LayerNorm",
             (Forbidden("torch.nn.functional.layer_norm / torch.layer_norm / nn.LayerNorm (or another built-in norm)",
                        ops=BUILT_IN_NORMS),)),
    Exercise("gelu", 5, "gelu", "精确 GELU", "exact GELU",
             (Forbidden("torch.nn.functional.gelu / nn.GELU", ops=("gelu",)),)),
    Exercise("feedforward", 5, "FeedForward.forward", "逐位置前馈网络 FFN", "position-wise feed-forward network"),
    Exercise("block", 5, "TransformerBlock.forward", "pre-LN 解码块", "the pre-LN decoder block"),
    Exercise("parameter_count", 5, "parameter_count", "参数账本公式", "the parameter ledger formula",
             (Forbidden("building a model (TransformerLM or any nn.Module) to count its parameters",
                        builds_modules=True),)),
)


# --- expected answers, computed from the reference (never typed in twice) ------


def _hand_input():
    return torch.tensor([1.0, 3.0])


def _residual_output(model):
    # one position, d = f = 2, zero attention increment, W1 = I, W2 = I/2, zero biases
    x = _hand_input()
    with torch.no_grad():
        return (x + 0.5 * model.gelu(model.LayerNorm(2)(x))).tolist()


def _increment_gap(model):
    a = 1 / (1 + model.EPS) ** 0.5
    return ((model.gelu(torch.tensor(a)) - model.gelu(torch.tensor(-a))) / 2).item()


def _sample_variance_output(model):
    x = _hand_input()
    centered = x - x.mean()
    return (centered / torch.sqrt(centered.pow(2).sum() / (len(x) - 1) + model.EPS)).tolist()


def _constant_output(model):
    norm = model.LayerNorm(2)
    with torch.no_grad():
        norm.bias.copy_(torch.tensor([0.5, -1.0]))
        return norm(torch.tensor([2.0, 2.0])).tolist()


def _normalised_variance(model):
    with torch.no_grad():
        return model.LayerNorm(2)(_hand_input()).var(unbiased=False).item()


def _registered(module):
    return sum(p.numel() for p in module.parameters())


def _chapter_config(model):
    return model.Config(vocab_size=32, block_size=64, d_model=64, n_heads=4, n_layers=2, d_ff=256, dropout=0.0)


def _shape_drill(model):
    # B=2, T=3, d=4, h=2, f=8: record the shape of every intermediate of one block
    cfg = model.Config(vocab_size=10, block_size=6, d_model=4, n_heads=2, n_layers=1, d_ff=8, dropout=0.0)
    block = model.TransformerBlock(cfg)
    x = torch.zeros(2, 3, 4)
    q = block.attention._split_heads(x)
    return {
        "layer_norm": list(block.ln_attention(x).shape),
        "per_head_q": list(q.shape),
        "attention_weights": list((q @ q.transpose(-2, -1)).shape),
        "ffn_hidden": list(block.feedforward.fc1(x).shape),
        "block_output": list(block(x)[0].shape),
    }


ANSWERS = (
    Answer("residual_output", "residual_output", "算例一：pre-LN 前馈残差的输出",
           "worked example 1: output of the pre-LN feed-forward residual", _residual_output),
    Answer("increment_gap", "increment_gap", "增量两坐标之差 a/2", "difference of the two increment coordinates, a/2",
           _increment_gap),
    Answer("sample_variance_output", "sample_variance_output", "误用 d-1 时的标准化结果",
           "normalised values with the d-1 mistake", _sample_variance_output),
    Answer("constant_output", "constant_output", "常量向量 (2,2) 的 LayerNorm 输出",
           "LayerNorm output of the constant vector (2,2)", _constant_output),
    Answer("normalised_variance", "normalised_variance", "标准化后的人口方差 v/(v+eps)",
           "population variance after normalising, v/(v+eps)", _normalised_variance),
    Answer("shape_drill", "shape_drill", "形状演练 B=2, T=3, d=4, h=2, f=8", "shape drill B=2, T=3, d=4, h=2, f=8",
           _shape_drill, exact=True),
    Answer("per_block_params", "per_block_params", "每块参数数（d=64, f=256）", "parameters per block (d=64, f=256)",
           lambda model: _registered(model.TransformerBlock(_chapter_config(model))), exact=True),
    Answer("total_params", "total_params", "整机参数数 Config(32, 64, 64, 4, 2, 256)",
           "whole-model parameters of Config(32, 64, 64, 4, 2, 256)",
           lambda model: _registered(model.TransformerLM(_chapter_config(model))), exact=True),
    Answer("small_total_params", "small_total_params", "小模型参数数 V=10, C=6, N=2, d=4, f=8",
           "parameters of the small model V=10, C=6, N=2, d=4, f=8",
           lambda model: _registered(model.TransformerLM(model.Config(10, 6, 4, 2, 2, 8, 0.0))), exact=True),
)

ASSIGNMENTS = {
    "ch05_block": Assignment("ch05_block", 5, EXERCISES, ANSWERS),
}


def exercises_by_target():
    return {exercise.target: exercise for exercise in EXERCISES}


def find_assignment(folder: Path, assignment_id: Optional[str] = None) -> Assignment:
    """The assignment a submission folder belongs to: named, or told by its notebook."""
    if assignment_id is not None:
        if assignment_id not in ASSIGNMENTS:
            raise KeyError(f"unknown assignment {assignment_id!r}; known: {', '.join(ASSIGNMENTS)}")
        return ASSIGNMENTS[assignment_id]
    for assignment in ASSIGNMENTS.values():
        if (folder / assignment.notebook_name).exists() or folder.name == assignment.id:
            return assignment
    if len(ASSIGNMENTS) == 1:
        return next(iter(ASSIGNMENTS.values()))
    raise KeyError(f"cannot tell which assignment {folder} is; pass --assignment")


@lru_cache(maxsize=None)
def _points_cached(path: str, mtime: float):
    cells = json.loads(Path(path).read_text(encoding="utf-8"))["cells"]
    points = {}
    for cell in cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if meta.get("grade"):
            points[meta["grade_id"]] = float(meta["points"])
    return points


def grade_cell_points(notebook: Path):
    return dict(_points_cached(str(notebook), notebook.stat().st_mtime))

"""The chapter notebook runs top to bottom with the reference, and its numbers are the seed's."""

import nbformat
import pytest
from nbclient import NotebookClient

from autograder import registry
from autograder.engine import expected_answer


@pytest.mark.parametrize("assignment", registry.ASSIGNMENTS.values(), ids=lambda a: a.id)
def test_solution_notebook_runs_top_to_bottom_with_hidden_checks(assignment):
    path = registry.REPO_ROOT / registry.SOLUTION_DIR / assignment.id / assignment.notebook_name
    notebook = nbformat.read(str(path), as_version=4)
    # the solutions folder has no package copy, so the kernel imports the reference
    NotebookClient(notebook, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    ticks = sum(o.text.count("✓") for o in outputs if o.output_type == "stream")
    # every exercise's visible check and every hidden check printed its pass line
    assert ticks == len(assignment.exercises) * 2 + len(assignment.answers)


def test_the_chapter_numbers_are_the_seeds():
    approx = pytest.approx
    assert expected_answer("residual_output") == approx([0.9206722, 3.4206696], abs=1e-7)
    assert expected_answer("increment_gap") == approx(0.4999975, abs=1e-7)
    assert expected_answer("sample_variance_output") == approx([-0.7071, 0.7071], abs=1e-4)
    assert expected_answer("constant_output") == [0.5, -1.0]  # exactly beta
    assert expected_answer("normalised_variance") == approx(1 / 1.00001, abs=1e-7)
    assert expected_answer("per_block_params") == 49_728
    assert expected_answer("total_params") == 107_776
    assert expected_answer("small_total_params") == 424
    assert expected_answer("shape_drill") == {
        "layer_norm": [2, 3, 4], "per_head_q": [2, 2, 3, 2], "attention_weights": [2, 2, 3, 3],
        "ffn_hidden": [2, 3, 8], "block_output": [2, 3, 4],
    }

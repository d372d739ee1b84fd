"""Reports that CI and course platforms read: Gradescope, JUnit, GitHub; and honest visible checks."""

import json
import subprocess
import sys
from xml.etree import ElementTree

from conftest import SAMPLES


def hero(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "autograder.cli", *args], capture_output=True, text=True, cwd=cwd)


def test_gradescope_results_json(tmp_path):
    path = tmp_path / "results.json"
    assert hero("grade", str(SAMPLES / "ln2_reads_x"), "--assignment", "ch05_block", "--gradescope",
                str(path)).returncode == 0
    results = json.loads(path.read_text(encoding="utf-8"))
    assert results["score"] == sum(t["score"] for t in results["tests"]) == 18
    for test in results["tests"]:
        assert {"name", "score", "max_score", "output", "visibility"} <= set(test)
    block = next(t for t in results["tests"] if t["name"].startswith("block"))
    assert block["score"] == 0 and "LayerNorm reads X" in block["output"] and "U" in block["output"]
    assert "1 of 14 graded items lost points (block)" in results["output"]


def test_gradescope_says_all_passed_only_when_everything_did(tmp_path):
    path = tmp_path / "results.json"
    hero("grade", str(SAMPLES / "reference"), "--assignment", "ch05_block", "--gradescope", str(path))
    assert "all 14 graded items passed, hidden checks included" in json.loads(path.read_text())["output"]


def test_junit_xml(tmp_path):
    path = tmp_path / "junit.xml"
    hero("grade", str(SAMPLES / "reference"), str(SAMPLES / "tanh_gelu"), "--assignment", "ch05_block", "--junit",
         str(path))
    suites = ElementTree.parse(path).getroot()
    assert [s.get("failures") for s in suites] == ["0", "1"]
    failure = suites[1].find("testcase[@name='gelu']/failure")
    assert "tanh approximation" in failure.get("message")
    assert all(len(s.findall("testcase")) == 14 for s in suites)


def test_github_summary_and_one_annotation_per_lost_item(tmp_path):
    summary = tmp_path / "summary.md"
    done = hero("grade", "post_ln", "stubs", "--assignment", "ch05_block", "--github-summary", str(summary),
                cwd=SAMPLES)
    annotations = [line for line in done.stdout.splitlines() if line.startswith("::error")]
    assert len(annotations) == 1 + 14  # post_ln loses block; the stubs lose every item
    assert annotations[0].startswith("::error file=post_ln/hero_transformer/model.py,line=")
    assert "title=block%3A 0/3 (failed)" in annotations[0]  # a property's ':' escaped as the toolkit does
    text = summary.read_text(encoding="utf-8")
    assert "### ch05_block: 18 / 21" in text and "| `block` | 0 | 3 | failed |" in text


def test_visible_checks_never_claim_the_final_grade():
    """eps outside the root passes every visible LayerNorm check and fails the hidden ones."""
    code = ("import sys; sys.path.insert(0, sys.argv[1])\n"
            "from hero_transformer import checks\nchecks.check_layer_norm()\n")
    done = subprocess.run([sys.executable, "-c", code, str(SAMPLES / "eps_outside_root")], capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    assert "hidden tests run after you submit" in done.stdout
    assert "all passed" not in done.stdout.lower() and "全部通过" not in done.stdout
    graded = json.loads(hero("grade", str(SAMPLES / "eps_outside_root"), "--format", "json").stdout)
    assert next(i for i in graded["items"] if i["id"] == "layer_norm")["score"] == 0


def test_the_pull_request_workflow_calls_the_cli_as_it_is():
    """The template's `hero grade` line parses with the real CLI, and it fetches, never vendors, the grader."""
    import shlex

    import yaml

    from autograder import cli, registry

    workflow = yaml.safe_load((registry.REPO_ROOT / "autograder" / "ci" / "grade-pull-request.yml").read_text())
    steps = workflow["jobs"]["grade"]["steps"]
    grade = next(step for step in steps if step.get("name") == "Grade")["run"]
    words = shlex.split(grade.replace("\\\n", " "), comments=True)
    expanded = {"$ASSIGNMENT": "ch05_block", "${{ vars.HERO_PASS_PERCENT || 0 }}": "0"}
    args = [expanded.get(word, word) for word in words[words.index("grade"):]]
    parser_calls = []
    original = cli._grade
    try:
        cli._grade = lambda parsed: parser_calls.append(parsed) or 0
        assert cli.main(args) == 0
    finally:
        cli._grade = original
    parsed = parser_calls[0]
    assert parsed.gradescope and parsed.junit and parsed.github_summary == ""
    checkout = [step for step in steps if step.get("uses", "").startswith("actions/checkout")]
    assert any("secrets.HERO_COURSE_TOKEN" in str(step.get("with")) for step in checkout)

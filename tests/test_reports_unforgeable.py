"""Reports nobody can forge: no student text acts as a CI workflow command, and no report file is
read or written through a link.

GitHub's runner (and Azure's) obeys an output line that starts, after any whitespace, with a
workflow command.  An exercise here prints every such command on a line of its own and raises an
error whose message is made of them; an answer cell does the same.  Whatever `hero grade` and the
pytest front end print (table, details, summary, annotations, failures) holds none at a line's
start, and in a GitHub job all of it is inside `::stop-commands::<token>` ... `::<token>::`."""

import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from autograder import hostile, registry, report, samples
from autograder.report import looks_like_a_command

from conftest import CHAPTER, MODEL, SAMPLES

COMMANDS = [
    "::notice title=ch05_block: 21/21::all 14 graded items passed, hidden checks included.",
    "::stop-commands::forged",
    "::forged::",
    "::add-mask::secret",
    "::set-output name=score::21",
    "::error file=hero_transformer/model.py,line=1,title=forged::forged",
    "::warning::forged",
    "::group::forged",
    "::endgroup::",
    "::echo::on",
    "::debug::forged",
    "::save-state name=score::21",
    "##[error]forged",
    "##[set-output name=score;]21",
    "##vso[task.complete result=Succeeded;]forged",
    "##vso[task.setvariable variable=score]21",
    "   ::notice::indented",
    "\t##vso[task.complete result=Succeeded;]tab",
    "\u3000::notice::ideographic space",
    "\u2028::notice::after a line separator",
    "mid-line ##vso[task.setvariable variable=score]21 and ##[error]forged (both act anywhere in a line)",
    "mixed case ##VSO[task.complete result=Succeeded;]forged",
]
FORGED = "\n".join(COMMANDS)
TOKEN_LINE = re.compile(r"::stop-commands::([0-9a-f]{32})\Z")


def hero(*args, cwd=None, env=None, timeout=600):
    environ = {k: v for k, v in os.environ.items()
               if k not in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", *report.WORKSPACE_VARIABLES)}
    return subprocess.run([sys.executable, "-m", "autograder.cli", *args], capture_output=True, text=True, cwd=cwd,
                          env={**environ, **(env or {})}, timeout=timeout)


@pytest.fixture(scope="module")
def forger(tmp_path_factory):
    """The reference, except that gelu prints every command and raises them (costing gelu) and
    an answer cell prints and raises them (costing residual_output)."""
    root = tmp_path_factory.mktemp("forger")
    attempt = hostile.Attempt("forger", "", "exercise", "gelu",
                              f"print({FORGED!r})\nraise RuntimeError({chr(10) + FORGED!r})\n")
    folder = hostile.build(CHAPTER, attempt, root / "forger", SAMPLES, **samples.default_hostile_values(root))
    from autograder import release

    release.replace_answers(folder / CHAPTER.notebook_name,
                            {"residual_output": f"print({FORGED!r})\nraise ValueError({chr(10) + FORGED!r})"})
    return folder


def _commands(text):
    return [line for line in text.splitlines() if looks_like_a_command(line)]


def _wrapped(stdout):
    """(the lines inside the stop-commands wrapper, the lines after it); asserts its shape."""
    lines = stdout.splitlines()
    found = TOKEN_LINE.fullmatch(lines[0])
    assert found, lines[:3]
    token = found[1]
    assert lines.count(f"::{token}::") == 1, "the runner must listen again exactly once"
    end = lines.index(f"::{token}::")
    assert stdout.count(token) == 2
    return lines[1:end], lines[end + 1:]


def test_neutralise_splits_every_command_at_a_line_start():
    text = report.neutralise(FORGED + "\n\x85::notice::nel\nfine :: in the middle ## too")
    assert _commands(text) == []
    for separator in "\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029\r":
        assert not any(looks_like_a_command(part) for part in
                       re.split("[\n\x0b\x0c\x1c-\x1e\x85\u2028\u2029\r]", report.neutralise(f"x{separator} ::a::b")))
    assert ": :notice" in text and "# #vso[" in text and "fine :: in the middle ## too" in text
    assert report.neutralise("::::") == ": :::" and report.neutralise("plain text") == "plain text"
    assert report.neutralise("### a heading ## and # marks") == "### a heading ## and # marks"
    assert report.neutralise("x ##vso[a]b ##[c]d") == "x # #vso[a]b # #[c]d"


def test_table_and_details_hold_no_workflow_command(forger):
    for lang in ("en", "zh"):
        done = hero("grade", str(forger), "--assignment", "ch05_block", "--details", "--lang", lang)
        assert done.returncode == 0, done.stderr[-3000:]
        assert _commands(done.stdout) == [] and _commands(done.stderr) == []
        assert ": :notice title=ch05_block: 21/21::" in done.stdout  # the text is there, made inert
        assert "total: 18 / 21" in done.stdout


def test_in_a_github_job_everything_is_wrapped_and_only_our_annotations_follow(forger, tmp_path):
    summary = tmp_path / "summary.md"
    done = hero("grade", str(forger), "--assignment", "ch05_block", "--details", "--lang", "en",
                "--github-summary", str(summary), env={"GITHUB_ACTIONS": "true"})
    assert done.returncode == 0, done.stderr[-3000:]
    inside, after = _wrapped(done.stdout)
    assert _commands("\n".join(inside)) == [] and _commands(done.stderr) == []
    assert ": :add-mask::secret" in "\n".join(inside)
    # our own annotations, one line each, one per lost item, nothing of the student's at a line start
    assert len(after) == 2 and all(line.startswith("::error file=") for line in after), after
    assert any("title=gelu%3A 0/2 (error)::" in line or "title=gelu%3A 0/2 (failed)::" in line for line in after), after
    assert all("%0A" in line for line in after if "gelu" in line)
    assert _commands(summary.read_text(encoding="utf-8")) == []


def test_a_summary_printed_to_stdout_is_inside_the_wrapper(forger):
    done = hero("grade", str(forger), "--assignment", "ch05_block", "--github-summary", env={"GITHUB_ACTIONS": "true"})
    inside, after = _wrapped(done.stdout)
    assert "### ch05_block: 18 / 21" in "\n".join(inside)
    assert _commands("\n".join(inside)) == [] and all(line.startswith("::error file=") for line in after)


def test_json_stays_json_in_a_github_job(forger):
    done = hero("grade", str(forger), "--assignment", "ch05_block", "--format", "json", env={"GITHUB_ACTIONS": "true"})
    graded = json.loads(done.stdout)
    assert _commands(done.stdout) == [] and graded["score"] == 18
    # the student's words are kept, neutralised where they enter the report (engine.printable)
    assert any(report.neutralise(FORGED.splitlines()[0]) in item["feedback_en"] for item in graded["items"])


@pytest.mark.parametrize("github", [False, True])
def test_pytest_prints_no_workflow_command(forger, tmp_path, github):
    environ = {k: v for k, v in os.environ.items() if k != "GITHUB_ACTIONS"}
    if github:
        environ["GITHUB_ACTIONS"] = "true"
    done = subprocess.run([sys.executable, "-m", "pytest", "--hero-submission", str(forger), "--hero-assignment",
                           "ch05_block", "--hero-lang", "en", "-rA"], capture_output=True, text=True, cwd=tmp_path,
                          env=environ)
    assert done.returncode == 1 and "2 failed, 12 passed" in done.stdout, done.stdout[-3000:]
    assert ": :stop-commands::forged" in done.stdout
    assert _commands(done.stderr) == []
    if github:
        inside, after = _wrapped(done.stdout)
        assert _commands("\n".join(inside)) == [] and after == []
    else:
        assert _commands(done.stdout) == []


# --- the summary reads the submission only through safefiles ----------------------------------


def test_the_summary_follows_no_link_in_the_package(tmp_path):
    folder = tmp_path / "linked"
    shutil.copytree(SAMPLES / "post_ln", folder)
    target = CHAPTER.item("block").target
    assert report._definition_line(folder, MODEL, target) is not None  # a regular file: its line is found
    (folder / MODEL).unlink()
    (folder / MODEL).symlink_to(registry.REPO_ROOT / "hero_transformer" / "model.py")
    assert report._definition_line(folder, MODEL, target) is None
    shutil.rmtree(folder / "hero_transformer")
    (folder / "hero_transformer").symlink_to(SAMPLES / "post_ln" / "hero_transformer")  # a folder on the way
    assert report._definition_line(folder, MODEL, target) is None


def test_a_fifo_in_the_package_cannot_hang_the_summary(tmp_path):
    folder = tmp_path / "fifo"
    shutil.copytree(SAMPLES / "post_ln", folder)
    (folder / MODEL).unlink()
    os.mkfifo(folder / MODEL)
    done = hero("grade", str(folder), "--assignment", "ch05_block", "--github-summary", str(tmp_path / "s.md"),
                timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    annotations = [line for line in done.stdout.splitlines() if line.startswith("::error")]
    assert annotations and not any(",line=" in line for line in annotations)


# --- report files are never written through a link ---------------------------------------------


def test_output_paths_that_are_links_are_refused_before_grading(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("untouched", encoding="utf-8")
    link = tmp_path / "results.json"
    link.symlink_to(victim)
    for flag in ("--gradescope", "--junit", "--github-summary"):
        done = hero("grade", str(SAMPLES / "reference"), "--assignment", "ch05_block", flag, str(link))
        assert done.returncode == 2 and "refused before grading" in done.stderr, (flag, done.stderr[-2000:])
        assert "graded in" not in done.stderr and done.stdout == ""
    assert victim.read_text(encoding="utf-8") == "untouched"
    fifo = tmp_path / "junit.xml"
    os.mkfifo(fifo)
    done = hero("grade", str(SAMPLES / "reference"), "--assignment", "ch05_block", "--junit", str(fifo), timeout=120)
    assert done.returncode == 2 and "a FIFO" in done.stderr


def test_a_linked_folder_inside_the_workspace_or_a_submission_is_refused(tmp_path):
    workspace, elsewhere = tmp_path / "workspace", tmp_path / "elsewhere"
    elsewhere.mkdir()
    submission = workspace / "submission"
    shutil.copytree(SAMPLES / "reference", submission)
    (workspace / "out").symlink_to(elsewhere)
    (submission / "out").symlink_to(elsewhere)
    for target, env in ((workspace / "out" / "junit.xml", {"GITHUB_WORKSPACE": str(workspace)}),
                        (submission / "out" / "junit.xml", {})):
        done = hero("grade", str(submission), "--assignment", "ch05_block", "--junit", str(target), env=env)
        assert done.returncode == 2 and "is a symbolic link inside a submission or the CI workspace" in done.stderr, \
            done.stderr[-2000:]
    assert list(elsewhere.iterdir()) == []
    # outside every submission and workspace, the machine's own links are followed as usual
    (tmp_path / "alias").symlink_to(elsewhere)
    done = hero("grade", str(submission), "--assignment", "ch05_block", "--junit", str(tmp_path / "alias" / "j.xml"))
    assert done.returncode == 0, done.stderr[-2000:]
    assert (elsewhere / "j.xml").read_text(encoding="utf-8").startswith("<?xml")


def test_open_output_walks_without_following_links(tmp_path):
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "link").symlink_to(outside)
    (root / "file-link").symlink_to(outside / "target")
    roots = report.protected_roots([root], environ={})
    with pytest.raises(report.UnsafeOutput, match="symbolic link inside"):
        report.open_output(root / "link" / "x.json", roots)
    with pytest.raises(report.UnsafeOutput, match="never written through a link"):
        report.open_output(root / "file-link", roots)
    with pytest.raises(report.UnsafeOutput, match="a symbolic link"):
        report.check_output(root / "file-link", roots)
    with report.open_output(root / "made" / "deep" / "r.json", roots) as out:  # folders made on the way
        out.write("one")
    with report.open_output(root / "made" / "deep" / "r.json", roots, append=True) as out:
        out.write(" two")
    assert (root / "made" / "deep" / "r.json").read_text() == "one two"
    with report.open_output(root / "made" / "deep" / "r.json", roots) as out:  # truncated, not appended
        out.write("three")
    assert (root / "made" / "deep" / "r.json").read_text() == "three"
    assert list(outside.iterdir()) == []


def test_pytest_refuses_a_junit_path_through_a_link(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "junit.xml").symlink_to(elsewhere / "junit.xml")
    done = subprocess.run([sys.executable, "-m", "pytest", "--hero-submission", str(SAMPLES / "reference"),
                           "--hero-assignment", "ch05_block", f"--junitxml={tmp_path / 'junit.xml'}"],
                          capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 4 and "--junitxml refused" in done.stderr, done.stderr[-2000:]
    assert list(elsewhere.iterdir()) == []

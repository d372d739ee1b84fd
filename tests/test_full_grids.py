"""benchmarks/full_grids.py, the GPU lease's script, checked on the CPU in tiny mode: it records
complete grids and packs them with every run, resumes, stops at its deadline, and leaves out a lab
whose first run fails on the device."""

import importlib.util
import sys
import tarfile

import pytest

from hero_transformer.labs import runner

SCRIPT = runner.Path(__file__).resolve().parent.parent / "benchmarks" / "full_grids.py"


@pytest.fixture
def full_grids(tmp_path, monkeypatch):
    monkeypatch.setenv("HERO_LABS_DIR", str(tmp_path / "labs"))
    monkeypatch.setenv("HERO_LAB_CORPUS", "fixture")
    monkeypatch.setattr(runner, "RECORDED", tmp_path / "results")  # not the committed folder
    spec = importlib.util.spec_from_file_location("full_grids", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    def main(*args):
        monkeypatch.setattr(sys, "argv", ["full_grids.py", "--mode", "tiny", "--jobs", "2", "--out",
                                          str(tmp_path / "out"), *args])
        return module.main()

    return main


def test_complete_grids_are_recorded_and_packed_with_their_runs_and_a_rerun_resumes(full_grids, tmp_path, capsys):
    assert full_grids("--device", "cpu", "--labs", "ngrams", "seed004_demo") == 0
    recorded = sorted(p.name for p in (tmp_path / "results" / "tiny").iterdir())
    assert recorded == ["ngrams.json", "seed004_demo.json"]
    runs = sorted(p.name for p in (tmp_path / "labs" / "ngrams" / "tiny" / "runs").glob("*.json"))
    with tarfile.open(tmp_path / "out" / "records.tar.gz") as tar:
        names = set(tar.getnames())
    assert {"hero_transformer/labs/results/tiny/ngrams.json", "build/labs/times.json"} <= names
    assert {f"build/labs/ngrams/tiny/runs/{name}" for name in runs} <= names
    assert "2 labs recorded" in capsys.readouterr().out

    assert full_grids("--device", "cpu", "--labs", "ngrams", "seed004_demo") == 0  # everything reused
    assert "0 runs to do" in capsys.readouterr().out


def test_no_run_starts_after_the_deadline_and_an_unfinished_grid_is_not_recorded(full_grids, tmp_path, capsys):
    assert full_grids("--device", "cpu", "--deadline", "0", "--labs", "seed004_demo") == 0
    out = capsys.readouterr().out
    assert "not started" in out and "0 labs recorded" in out and "unfinished: seed004_demo (0 of" in out
    assert not (tmp_path / "results" / "tiny" / "seed004_demo.json").exists()


def test_a_lab_that_fails_on_the_device_is_named_and_left_out_and_the_others_still_run(full_grids, tmp_path, capsys):
    # the meta device computes no values: more_data's first run fails there, ngrams trains nothing
    assert full_grids("--device", "meta", "--labs", "more_data", "ngrams") == 1
    out = capsys.readouterr().out
    assert "more_data: its first tiny run fails on meta, so its grid is left out" in out
    assert sorted(p.name for p in (tmp_path / "results" / "tiny").iterdir()) == ["ngrams.json"]

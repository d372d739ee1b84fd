"""The Tang-poem corpus: the committed fixture, the integrity-checked fetch, and the figures
measured against seed 003's.  Nothing here downloads: the fetch is proven on tarballs built
in the test, the way npm pack would deliver one."""

import base64
import hashlib
import io
import json
import subprocess
import sys
import tarfile

import pytest

from autograder import reference

corpus = reference.load("corpus")


def test_the_fixture_is_the_first_300_tang_poems_with_their_licence():
    poems = corpus.load_poems("fixture")
    assert len(poems) == 300
    assert all(set(poem) >= {"title", "author", "paragraphs"} for poem in poems)
    assert poems[0]["title"] == "帝京篇十首 一" and poems[0]["author"] == "太宗皇帝"
    licence = corpus.LICENSE.read_text(encoding="utf-8")
    assert "MIT License" in licence and "JackeyGao" in licence
    text = corpus.corpus_text(poems[:2])
    assert text.count("\n") == 2 and text.startswith("秦川雄帝宅，函谷壯皇居。")
    train, heldout = corpus.split_poems(poems)
    assert len(heldout) == 30 and train + heldout == poems


def _tarball(tmp_path, members):
    """A gzipped tarball of {name: bytes}, and its npm-style sha512 integrity string."""
    path = tmp_path / "chinese-poetry-2.0.1.tgz"
    with tarfile.open(path, "w:gz") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    digest = hashlib.sha512(path.read_bytes()).digest()
    return path, "sha512-" + base64.b64encode(digest).decode("ascii")


def test_fetch_verifies_the_tarball_and_caches_only_the_tang_poems(tmp_path):
    poems = json.dumps([{"title": "t", "author": "a", "paragraphs": ["床前明月光，"]}], ensure_ascii=False).encode()
    path, integrity = _tarball(tmp_path, {
        "package/LICENSE": b"MIT",
        "package/dist/quantangshi/poet.tang.0.json": poems,
        "package/dist/quantangshi/poet.tang.1000.json": poems,
        "package/dist/quantangshi/poet.song.0.json": b"[]",  # not a Tang poem file
        "package/dist/quantangshi/../../../escape.json": b"[]",  # a path out of the cache
    })
    folder = corpus.fetch(tmp_path / "cache", tarball=path, integrity=integrity, log=lambda line: None)
    assert sorted(p.name for p in folder.iterdir()) == ["COMPLETE", "LICENSE", "poet.tang.0.json", "poet.tang.1000.json"]
    assert not (tmp_path / "escape.json").exists()
    assert corpus.is_cached(folder)


def test_fetch_refuses_a_tarball_whose_hash_is_not_the_published_one(tmp_path):
    path, _ = _tarball(tmp_path, {"package/dist/quantangshi/poet.tang.0.json": b"[]"})
    with pytest.raises(ValueError, match="is not the published"):
        corpus.fetch(tmp_path / "cache", tarball=path, log=lambda line: None)  # the real INTEGRITY
    assert not (tmp_path / "cache").exists()  # nothing cached before the hash is checked


def test_hero_corpus_stats_compares_with_the_seed_on_the_fixture():
    done = subprocess.run([sys.executable, "-m", "autograder.cli", "corpus", "stats", "--source", "fixture"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "corpus: fixture"
    assert "coverage" in done.stdout and "87.6%" in done.stdout and "7.0901" in done.stdout
    assert "about 255,000" in done.stdout  # the seed's "25.5万字", not an exact count


@pytest.mark.skipif(not corpus.is_cached(), reason="the full corpus is not cached here (`hero corpus fetch`); "
                                                   "the fixture tests above still ran")
def test_the_full_corpus_comes_close_to_the_seeds_figures():
    from autograder.cli import corpus_figures

    figures = corpus_figures("full", 4003, 1200)
    assert figures["poems"] == 4003
    assert abs(figures["coverage"] - 0.876) < 0.005  # measured 87.69%
    assert abs(figures["unigram"] - 5.672) < 0.02  # measured 5.660
    assert round(figures["uniform"], 2) == 7.09

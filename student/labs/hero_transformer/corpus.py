"""The course's corpus: Tang poems (全唐诗) from the npm package chinese-poetry 2.0.1 (MIT).

Seed 003 trains on the first 4,003 poems of 全唐诗.  Two sources, one text format:

- the fixture: the first 300 poems, committed in hero_transformer/data/ with the package's
  licence; tests and the notebooks' defaults read it, so nothing is downloaded for them;
- the full corpus: `fetch()` (or `hero corpus fetch`) runs npm's own client
  (`npm pack chinese-poetry@2.0.1`), checks the tarball against the integrity hash below,
  and caches only the Tang poems, dist/quantangshi/poet.tang.*.json, under `cache_dir()`.

A poem's text is its lines joined, one poem per line: `corpus_text(poems)`.  Titles and
authors are left out; the newline ends a poem, so a model learns where poems stop.
"""

import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

NPM_PACKAGE, VERSION = "chinese-poetry", "2.0.1"
# `npm view chinese-poetry@2.0.1 dist.integrity`: what npm itself checks the tarball against
INTEGRITY = "sha512-KtYARvV7CWNtax0na9+Jn6PlhGgSoid7PWyDzXI4KsCEm2odZcqEQyval5koaLygZnM/EQ3lfJ//25K8p3uHNg=="
TANG_FILE = re.compile(r"package/dist/quantangshi/(poet\.tang\.\d+\.json)\Z")
# what seed 003 reports for its corpus (its chapter 1 setting), to compare ours against
SEED_003 = {"poems": 4003, "characters": 255_000, "vocab_size": 1200, "coverage": 0.876, "uniform": 7.09,
            "unigram": 5.672}
DATA_DIR = Path(__file__).resolve().parent / "data"
FIXTURE = DATA_DIR / "tang_poems_first300.json"
LICENSE = DATA_DIR / "chinese-poetry-LICENSE"


def cache_dir():
    """Where the full corpus is kept: $HERO_CACHE, else $XDG_CACHE_HOME/hero_transformer, else
    ~/.cache/hero_transformer; one folder per package version."""
    root = os.environ.get("HERO_CACHE") or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache",
                                                "hero_transformer")
    return Path(root) / f"{NPM_PACKAGE}-{VERSION}"


def _tang_files(folder):
    return sorted(folder.glob("poet.tang.*.json"), key=lambda path: int(path.name.split(".")[2]))


def is_cached(folder=None):
    folder = Path(folder or cache_dir())
    return (folder / "COMPLETE").exists() and bool(_tang_files(folder))


def check_integrity(tarball, integrity=INTEGRITY):
    """Raise ValueError unless the file's digest is the one npm's registry publishes."""
    algorithm, _, expected = integrity.partition("-")
    digest = hashlib.new(algorithm)
    with open(tarball, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    got = base64.b64encode(digest.digest()).decode("ascii")
    if got != expected:
        raise ValueError(f"{tarball}: integrity {algorithm}-{got} is not the published {integrity}")


def fetch(folder=None, npm="npm", tarball=None, log=print, integrity=INTEGRITY):
    """Download (or take `tarball`), verify, and cache the Tang poems; returns the cache folder.

    Nothing is written to the cache until the tarball's hash is verified, and the cache is
    marked COMPLETE only after every file is in place, so an interrupted fetch is redone."""
    folder = Path(folder or cache_dir())
    if is_cached(folder):
        return folder
    with tempfile.TemporaryDirectory(prefix="hero-corpus-") as scratch:
        if tarball is None:
            if shutil.which(npm) is None:
                raise RuntimeError(f"`{npm}` is not installed: install Node.js's npm, or pass a downloaded "
                                   f"{NPM_PACKAGE}-{VERSION}.tgz (hero corpus fetch --tarball FILE)")
            log(f"npm pack {NPM_PACKAGE}@{VERSION} (about 85 MB) ...")
            done = subprocess.run([npm, "pack", f"{NPM_PACKAGE}@{VERSION}", "--silent"], cwd=scratch,
                                  capture_output=True, text=True)
            if done.returncode != 0:
                raise RuntimeError(f"npm pack failed:\n{done.stderr.strip()[-2000:]}")
            tarball = Path(scratch, f"{NPM_PACKAGE}-{VERSION}.tgz")
        check_integrity(tarball, integrity)
        staging = Path(scratch, "tang")
        staging.mkdir()
        with tarfile.open(tarball, "r:gz") as archive:
            for member in archive:
                match = TANG_FILE.match(member.name)
                if match and member.isfile():  # by name only: no path from the archive is trusted
                    (staging / match.group(1)).write_bytes(archive.extractfile(member).read())
                elif member.name == "package/LICENSE":
                    (staging / "LICENSE").write_bytes(archive.extractfile(member).read())
        if not _tang_files(staging):
            raise RuntimeError(f"{tarball} holds no dist/quantangshi/poet.tang.*.json")
        folder.parent.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(folder, ignore_errors=True)
        shutil.copytree(staging, folder)
        (folder / "COMPLETE").write_text(f"{NPM_PACKAGE}@{VERSION} {INTEGRITY}\n", encoding="utf-8")
    log(f"cached {len(_tang_files(folder))} files of Tang poems in {folder}")
    return folder


def load_poems(source="fixture", limit=None):
    """Poems as dicts (title, author, paragraphs), in the package's order.

    source: "fixture" (the committed first 300), "full" (the cache; run `hero corpus fetch`
    first) or "auto" (the cache when present, else the fixture)."""
    if source == "auto":
        source = "full" if is_cached() else "fixture"
    if source == "fixture":
        poems = json.loads(FIXTURE.read_text(encoding="utf-8"))
    elif source == "full":
        if not is_cached():
            raise FileNotFoundError(f"the full corpus is not cached in {cache_dir()}: run `hero corpus fetch`")
        poems = []
        for path in _tang_files(cache_dir()):
            poems += json.loads(path.read_text(encoding="utf-8"))
            if limit is not None and len(poems) >= limit:
                break
    else:
        raise ValueError(f"source must be 'fixture', 'full' or 'auto', not {source!r}")
    return poems[:limit] if limit is not None else poems


def poem_text(poem):
    return "".join(poem["paragraphs"])


def corpus_text(poems):
    """One poem per line, each line ended by a newline."""
    return "".join(poem_text(poem) + "\n" for poem in poems)


def split_poems(poems, heldout_fraction=0.1):
    """(train, held-out): the last poems are held out, whole, so no poem is in both."""
    cut = len(poems) - max(1, round(len(poems) * heldout_fraction))
    return poems[:cut], poems[cut:]


def figures(tokens, poems, vocab_size=SEED_003["vocab_size"]):
    """Seed 003's corpus figures, measured on `poems` with a tokens module (yours in the chapter-1
    notebook, the reference in `hero corpus stats`): size, coverage and the two baselines, and the
    held-out unigram cross entropy (the last 10% of the poems, add-one frequencies of the rest)."""
    text = corpus_text(poems)
    itos = tokens.build_vocab(text, vocab_size)
    ids = tokens.Tokenizer(itos).encode(text)
    train, heldout = split_poems(poems)
    coder = tokens.Tokenizer(tokens.build_vocab(corpus_text(train), vocab_size))
    train_ids, heldout_ids = coder.encode(corpus_text(train)), coder.encode(corpus_text(heldout))
    return {
        "poems": len(poems), "characters": len(text), "distinct": len(set(text)), "vocab_size": len(itos),
        "coverage": tokens.coverage(itos, text), "uniform": tokens.uniform_cross_entropy(len(itos)),
        "unigram": tokens.unigram_cross_entropy(ids, ids, len(itos), alpha=0.0),
        "heldout_poems": len(heldout),
        "heldout_unigram": tokens.unigram_cross_entropy(train_ids, heldout_ids, coder.vocab_size, alpha=1.0),
        "heldout_own_entropy": tokens.unigram_cross_entropy(heldout_ids, heldout_ids, coder.vocab_size, alpha=0.0),
        "heldout_unk": heldout_ids.count(tokens.UNK_ID) / len(heldout_ids),
    }

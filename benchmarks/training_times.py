"""The training times chapter 8 states, measured: seconds per step of the chapter's model (one
thread, as its training cell runs it) and of the capstone's (its own thread count), times their
steps.  The figures in the notebook's text and in README come from this script's output
(docs/benchmarks.md, "Training times"); the notebook also measures a few steps on the student's
own machine before each run.

    .venv/bin/python benchmarks/training_times.py
"""

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from autograder import reference  # noqa: E402

poetry, corpus = reference.load("poetry"), reference.load("corpus")

CHAPTER = {"n_layers": 2, "d_model": 128, "n_heads": 4, "d_ff": 256, "block_size": 64, "dropout": 0.0,
           "batch_size": 32, "seed": 0, "threads": 1}


def chapter_steps(train_ids):
    """The chapter's rule: at most 12 passes over the training ids, at most 300 steps."""
    return min(300, 12 * len(train_ids) // (CHAPTER["batch_size"] * CHAPTER["block_size"]))


def main():
    print(f"machine: {os.cpu_count()} CPU cores, load average {os.getloadavg()[0]:.2f} at the start")
    sources = ["fixture"] + (["full"] if corpus.is_cached() else [])
    for source in sources:
        data = poetry.prepare(source)
        lm = poetry.build(data["coder"].vocab_size, CHAPTER)
        per_step = poetry.seconds_per_step(lm, data["train_ids"], CHAPTER["batch_size"], CHAPTER["block_size"],
                                           threads=CHAPTER["threads"], steps=20)
        steps = chapter_steps(data["train_ids"])
        print(f"chapter 8, section 8 ({source}): {steps} steps x {per_step:.3f} s = {steps * per_step:.0f} s "
              f"(1 thread)")
    if corpus.is_cached():
        data, settings = poetry.prepare("full"), poetry.CAPSTONE
        lm = poetry.build(data["coder"].vocab_size, settings)
        per_step = poetry.seconds_per_step(lm, data["train_ids"], settings["batch_size"], settings["block_size"],
                                           threads=settings["threads"], steps=20)
        print(f"capstone: {settings['steps']} steps x {per_step:.3f} s = {settings['steps'] * per_step / 60:.1f} min "
              f"({settings['threads']} threads)")
    else:
        print("capstone: the full corpus is not cached (hero corpus fetch); not measured")
    print(f"load average {os.getloadavg()[0]:.2f} at the end; {time.strftime('%Y-%m-%d')}")


if __name__ == "__main__":
    main()

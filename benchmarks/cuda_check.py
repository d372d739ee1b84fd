"""The CUDA equivalence check, for a machine with a GPU (CI has none; run it where one is lent).

    .venv/bin/python benchmarks/cuda_check.py

Grades the reference, the stubs and a few faulty samples with `hero grade` and checks that the
report says both devices were compared (`cpu, cuda`), that the reference still earns full marks
(the CUDA outputs match the CPU reference within the stated tolerance) and that each fault still
loses its exercise.  Without a GPU it says so and exits 0, checking nothing.
"""

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import torch

from autograder import registry, samples

SAMPLES = {"reference": set(), "tanh_gelu": {"gelu"}, "post_ln": {"block"}, "sample_variance": {"layer_norm"}}


def main():
    if not torch.cuda.is_available():
        print("cuda check: no GPU here (torch.cuda.is_available() is False); nothing checked")
        return 0
    generated = samples.write(Path(tempfile.mkdtemp(prefix="hero-cuda-")), [registry.ASSIGNMENTS["ch05_block"]],
                              with_hostile=False)["ch05_block"]
    folders = [str(generated / name) for name in SAMPLES]
    done = subprocess.run([sys.executable, "-m", "autograder.cli", "grade", "--format", "json", *folders],
                          capture_output=True, text=True)
    if done.returncode:
        print(done.stderr[-3000:])
        return 1
    failures = []
    for report in json.loads(done.stdout):
        name = report["submission"].rsplit("/", 1)[-1]
        lost = {item["id"] for item in report["items"] if item["score"] < item["max_score"]}
        if report["devices"] != ["cpu", "cuda"]:
            failures.append(f"{name}: devices checked {report['devices']}")
        if lost != SAMPLES[name]:
            failures.append(f"{name}: lost {sorted(lost)}, expected {sorted(SAMPLES[name])}")
    print("cuda check: " + ("; ".join(failures) if failures else
                            f"{len(SAMPLES)} samples graded on cpu and cuda, each as expected"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

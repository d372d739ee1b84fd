"""The CUDA equivalence check, for a machine with a GPU (CI has none; run it where one is lent).

    .venv/bin/python benchmarks/cuda_check.py [ASSIGNMENT ...]

Grades, for every chapter (or the ones named), the reference, every fault and every correct
variant with `hero grade`, in one pool, and checks that each report says both devices were
compared (`cpu, cuda`), that the reference and every variant still earn full marks (the CUDA
outputs match the CPU reference within the stated tolerance) and that each fault still loses
exactly its exercise.  Without a GPU it says so and exits 0, checking nothing.
"""

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import torch

from autograder import registry, samples


def expected_losses(assignment):
    """{sample name: the exercises it must lose}: none for the reference and the variants."""
    expected = {"reference": set()}
    for entry in assignment.entries():
        if entry.kind in ("fault", "correct"):
            expected[entry.sample] = {entry.exercise} if entry.kind == "fault" else set()
    return expected


def main(names):
    if not torch.cuda.is_available():
        print("cuda check: no GPU here (torch.cuda.is_available() is False); nothing checked")
        return 0
    chosen = [registry.ASSIGNMENTS[name] for name in names] if names else list(registry.ASSIGNMENTS.values())
    generated = samples.write(Path(tempfile.mkdtemp(prefix="hero-cuda-")), chosen, with_hostile=False)
    expected = {str(generated[a.id] / name): lost for a in chosen for name, lost in expected_losses(a).items()}
    done = subprocess.run([sys.executable, "-m", "autograder.cli", "grade", "--format", "json", *expected],
                          capture_output=True, text=True)
    if not done.stdout.strip():
        print(done.stderr[-3000:])
        return 1
    failures = []
    for report in json.loads(done.stdout):
        name = "/".join(report["submission"].rsplit("/", 2)[-2:])
        lost = {item["id"] for item in report["items"]
                if item["kind"] == "exercise" and item["score"] < item["max_score"]}
        if report["devices"] != ["cpu", "cuda"]:
            failures.append(f"{name}: devices checked {report['devices']}")
        if lost != expected[report["submission"]]:
            failures.append(f"{name}: lost {sorted(lost)}, expected {sorted(expected[report['submission']])}")
    print("cuda check: " + ("; ".join(failures) if failures else
                            f"{len(expected)} samples of {len(chosen)} chapters graded on cpu and cuda, each as expected"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

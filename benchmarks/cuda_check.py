"""The CUDA equivalence check, for a machine with a GPU (CI has none; run it where one is lent).

    .venv/bin/python benchmarks/cuda_check.py [ASSIGNMENT ...]

Grades, for every chapter (or the ones named), the reference, every fault and every correct
variant with `hero grade`, in one pool, and checks that each report says both devices were
compared (`cpu, cuda`), that the reference and every variant still earn full marks (the CUDA
outputs match the CPU reference within the stated tolerance) and that each fault still loses
exactly its exercise.  Then the labs: the default lab model computes on cuda what the frozen model computes on the CPU,
and every lab's tiny grid runs with `--device cuda`.  Without a GPU it says so and exits 0,
checking nothing.
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
    return 1 if failures or not labs_on_cuda() else 0


def labs_on_cuda():
    from hero_transformer import labs
    from hero_transformer.labs import variants
    from hero_transformer.model import Config, TransformerLM, init_weights

    cfg = Config(vocab_size=50, block_size=32, d_model=32, n_heads=4, n_layers=2, d_ff=64)
    frozen = init_weights(TransformerLM(cfg), torch.Generator().manual_seed(0))
    lab = variants.init_lab_weights(variants.LabLM(cfg), torch.Generator().manual_seed(0)).cuda()
    idx = torch.randint(0, 50, (4, 32), generator=torch.Generator().manual_seed(1))
    same = torch.allclose(lab(idx.cuda()).logits.cpu(), frozen(idx).logits, rtol=1e-4, atol=1e-5)
    print(f"labs: default lab model on cuda {'equals' if same else 'DIFFERS FROM'} the frozen model on cpu")
    failed = []
    with tempfile.TemporaryDirectory(prefix="hero-labs-cuda-") as out:
        for name in labs.all_labs():
            try:
                labs.run(name, "tiny", device="cuda", out=Path(out, name), progress=False, log=lambda line: None)
            except Exception as exc:  # report every lab, not just the first failure
                failed.append(f"{name}: {exc!r}")
    print("labs: " + ("; ".join(failed) if failed else f"all {len(labs.all_labs())} tiny grids ran on cuda"))
    return same and not failed


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

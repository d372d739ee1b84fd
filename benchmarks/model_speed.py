"""Training-step and generation speed of the reference model, side by side in one run.

1. A training step (forward, loss, backward, AdamW step) at seed 003's scale: d = 128, h = 4,
   d_ff = 256, T = 64, B = 32, V = 1200, with 4 and 12 layers, three ways on the same weights
   and batch: chapter 4's hand-written attention, the reference as the labs and `train` run it
   (`sdpa.use_sdpa`, proven equal by tests/test_sdpa.py), and a model built directly on
   `F.scaled_dot_product_attention`.  Peak memory of one step is reported next to its time.
2. Generating 256 tokens greedily with the KV cache against recomputing the whole prefix at
   every step: same model (4 layers), same prompts, for one prompt and for a batch of 8, and
   the script checks that the tokens are the same.

Rounds alternate between the ways compared, and each figure is the median over rounds, so
load from other processes falls on all of them alike.

    .venv/bin/python benchmarks/model_speed.py [--rounds 15] [--device cpu|cuda]
"""

import argparse
import statistics
import time

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile

from hero_transformer import model, sdpa
from hero_transformer.train import generate

SCALE = dict(vocab_size=1200, d_model=128, n_heads=4, d_ff=256, dropout=0.0)
BATCH, LENGTH = 32, 64
PROMPT, NEW_TOKENS = 16, 256
GENERATION_BATCHES = (1, 8)


class DirectSDPAttention(model.CausalSelfAttention):
    """The comparison the issue names: attention written straight on the fused kernel (no
    cache, no mask buffer), as a model built on SDPA from the start would have it."""

    def forward(self, x, past_key_value=None, use_cache=False):
        batch, length, width = x.shape
        q, k, v = (t.view(batch, length, self.n_heads, self.head_dim).transpose(1, 2)
                   for t in self.qkv(x).split(width, dim=-1))
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(out.transpose(1, 2).reshape(batch, length, width)), None


def clock(device):
    if device.type == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter()


def peak_step_memory(step, device):
    """Bytes allocated at the highest point of one step, above what was live before it."""
    if device.type == "cuda":
        torch.cuda.synchronize()
        before = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        step()
        torch.cuda.synchronize()
        return torch.cuda.max_memory_allocated() - before
    # the profiler records every allocation and free with its size; their running sum in time
    # order is the memory the step holds at each moment
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        step()
    live = peak = 0
    for event in sorted(prof.events(), key=lambda e: e.time_range.start):
        live += event.self_cpu_memory_usage
        peak = max(peak, live)
    return peak


def training_steps(n_layers, rounds, device):
    cfg = model.Config(block_size=LENGTH, n_layers=n_layers, **SCALE)
    torch.manual_seed(0)
    base = model.init_weights(model.TransformerLM(cfg), torch.Generator().manual_seed(0))
    ways = {"hand-written (chapter 4)": lambda m: m, "reference via use_sdpa": sdpa.use_sdpa,
            "built on SDPA": lambda m: swap(m, DirectSDPAttention)}
    generator = torch.Generator().manual_seed(1)
    idx = torch.randint(cfg.vocab_size, (BATCH, LENGTH + 1), generator=generator).to(device)
    inputs, targets = idx[:, :-1], idx[:, 1:]
    steps, losses = {}, {}
    for name, prepare in ways.items():
        lm = model.TransformerLM(cfg)
        lm.load_state_dict(base.state_dict())
        lm = prepare(lm).to(device)
        optimizer = torch.optim.AdamW(lm.parameters(), lr=3e-4, betas=(0.9, 0.95))

        def step(lm=lm, optimizer=optimizer, name=name):
            optimizer.zero_grad(set_to_none=True)
            loss = lm(inputs, targets).loss
            loss.backward()
            optimizer.step()
            losses.setdefault(name, loss.item())

        step()  # warm up: allocator, optimizer state
        steps[name] = step
    first = list(losses.values())
    assert max(first) - min(first) < 1e-4, f"the three ways disagree on the first loss: {losses}"
    times = {name: [] for name in steps}
    for _ in range(rounds):
        for name, step in steps.items():
            start = clock(device)
            step()
            times[name].append(clock(device) - start)
    memory = {name: peak_step_memory(step, device) for name, step in steps.items()}
    return {name: (statistics.median(times[name]), memory[name]) for name in steps}


def swap(lm, cls):
    for block in lm.blocks:
        block.attention.__class__ = cls
    return lm


def generation(batch, rounds, device):
    cfg = model.Config(block_size=PROMPT + NEW_TOKENS, n_layers=4, **SCALE)
    lm = model.init_weights(model.TransformerLM(cfg), torch.Generator().manual_seed(0)).to(device)
    prompt = torch.randint(cfg.vocab_size, (batch, PROMPT), generator=torch.Generator().manual_seed(2)).to(device)
    times = {True: [], False: []}
    tokens = {}
    for _ in range(rounds):
        for cached in (True, False):
            start = clock(device)
            tokens[cached] = generate(lm, prompt, NEW_TOKENS, temperature=0.0, use_cache=cached)
            times[cached].append(clock(device) - start)
    assert torch.equal(tokens[True], tokens[False]), "cached and uncached greedy generation differ"
    return statistics.median(times[True]), statistics.median(times[False])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=15, help="timed rounds per way (median reported)")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    args = parser.parse_args()
    if args.device == "cuda" and not torch.cuda.is_available():
        raise SystemExit("no CUDA device here: run with --device cpu")
    device = torch.device(args.device)
    print(f"torch {torch.__version__}, {device}, {torch.get_num_threads()} threads, {args.rounds} rounds")
    print(f"\ntraining step: d={SCALE['d_model']} h={SCALE['n_heads']} d_ff={SCALE['d_ff']} "
          f"T={LENGTH} B={BATCH} V={SCALE['vocab_size']}")
    print(f"{'layers':>6}  {'attention':<26}{'ms/step':>9}{'peak MiB':>10}{'vs SDPA':>9}")
    ratios = []
    for n_layers in (4, 12):
        results = training_steps(n_layers, args.rounds, device)
        sdpa_time = results["built on SDPA"][0]
        for name, (seconds, peak) in results.items():
            print(f"{n_layers:>6}  {name:<26}{seconds * 1e3:>9.1f}{peak / 2**20:>10.1f}{seconds / sdpa_time:>8.2f}x")
        ratios.append((n_layers, results["reference via use_sdpa"][0] / sdpa_time,
                       results["hand-written (chapter 4)"][0] / sdpa_time))
    print(f"\ngeneration: {NEW_TOKENS} tokens after a {PROMPT}-token prompt, greedy, 4 layers")
    speedups = []
    for batch in GENERATION_BATCHES:
        cached, uncached = generation(batch, max(3, args.rounds // 5), device)
        speedups.append(f"batch {batch} {uncached / cached:.1f}x")
        print(f"  batch {batch}: KV cache {cached:.3f} s, whole prefix every step {uncached:.3f} s: "
              f"{uncached / cached:.1f}x faster (same tokens)")
    summary = ", ".join(f"{n} layers: reference {r:.2f}x / hand-written {h:.2f}x of SDPA" for n, r, h in ratios)
    print(f"\nsummary: {summary}; KV cache {', '.join(speedups)} "
          f"(targets: within 1.10x, at least 5x)")

if __name__ == "__main__":
    main()

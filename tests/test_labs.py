"""The labs' model variants, diagnostics and runner (hero_transformer/labs/)."""

import json
import math

import pytest
import torch

from autograder import registry, release
from hero_transformer import labs
from hero_transformer.labs import diagnostics, evidence, runner, variants
from hero_transformer.labs.variants import LabLM, Variant
from hero_transformer.model import Config, TransformerLM, init_weights

CFG = Config(vocab_size=40, block_size=16, d_model=16, n_heads=4, n_layers=3, d_ff=32)


def frozen_and_lab(variant=Variant(), seed=0):
    reference = init_weights(TransformerLM(CFG), torch.Generator().manual_seed(seed))
    lab = variants.init_lab_weights(LabLM(CFG, variant), torch.Generator().manual_seed(seed))
    return reference, lab


def batch(seed=1, length=12):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, CFG.vocab_size, (3, length), generator=g), torch.randint(0, CFG.vocab_size, (3, length), generator=g)


# --- with the defaults, the frozen model -------------------------------------------------------


def test_default_variant_has_the_frozen_models_parameters_and_initial_values():
    reference, lab = frozen_and_lab()
    ref, ours = dict(reference.named_parameters()), dict(lab.named_parameters())
    assert list(ref) == list(ours)
    for name in ref:
        assert torch.equal(ref[name], ours[name]), name


def test_default_variant_computes_the_frozen_models_outputs_and_gradients():
    reference, lab = frozen_and_lab()
    idx, targets = batch()
    expected, got = reference(idx, targets), lab(idx, targets)
    torch.testing.assert_close(got.logits, expected.logits, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(got.loss, expected.loss, rtol=1e-6, atol=1e-6)
    expected.loss.backward()
    got.loss.backward()
    for (name, p), q in zip(reference.named_parameters(), lab.parameters()):
        torch.testing.assert_close(q.grad, p.grad, rtol=1e-4, atol=1e-6, msg=name)


def test_default_variant_caches_like_the_frozen_model():
    reference, lab = frozen_and_lab()
    idx, _ = batch()
    prompt, rest = idx[:, :7], idx[:, 7:]
    ref_past = reference(prompt, use_cache=True).past_key_values
    lab_past = lab(prompt, use_cache=True).past_key_values
    torch.testing.assert_close(lab(rest, past_key_values=lab_past).logits,
                               reference(rest, past_key_values=ref_past).logits, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(lab(rest, past_key_values=lab_past).logits, lab(idx).logits[:, 7:],
                               rtol=1e-5, atol=1e-5)


def test_a_frozen_models_state_dict_loads_into_the_default_variant():
    reference, _ = frozen_and_lab(seed=3)
    lab = LabLM(CFG)
    lab.load_state_dict(reference.state_dict())
    idx, _ = batch()
    torch.testing.assert_close(lab(idx).logits, reference(idx).logits, rtol=1e-5, atol=1e-5)


def test_collecting_changes_no_output_and_returns_causal_weights():
    _, lab = frozen_and_lab()
    idx, _ = batch()
    plain, collected = lab(idx), lab(idx, collect=True)
    torch.testing.assert_close(collected.logits, plain.logits, rtol=1e-5, atol=1e-5)
    assert len(collected.hidden_states) == CFG.n_layers + 1 and len(collected.attentions) == CFG.n_layers
    weights = collected.attentions[0]
    assert weights.shape == (3, CFG.n_heads, 12, 12)
    torch.testing.assert_close(weights.sum(-1), torch.ones(3, CFG.n_heads, 12))
    assert torch.all(weights.triu(diagonal=1) == 0)


# --- each switch does what it says -------------------------------------------------------------


def test_post_ln_is_the_2017_order():
    _, lab = frozen_and_lab(Variant(placement="post"))
    block = lab.blocks[0]
    x = torch.randn(2, 5, CFG.d_model)
    attended, _ = variants.frozen.CausalSelfAttention.forward(block.attention, x)
    u = block.ln_attention(x + attended)
    expected = block.ln_feedforward(u + block.feedforward(u))
    torch.testing.assert_close(block(x)[0], expected, rtol=1e-5, atol=1e-5)


def test_without_residuals_each_sublayer_replaces_the_stream():
    _, lab = frozen_and_lab(Variant(residual=False))
    block = lab.blocks[0]
    x = torch.randn(2, 5, CFG.d_model)
    u = block.attention(block.ln_attention(x))[0]
    torch.testing.assert_close(block(x)[0], block.feedforward(block.ln_feedforward(u)), rtol=1e-5, atol=1e-5)


def test_rmsnorm_keeps_its_statistics_in_float32_and_has_no_bias():
    norm = variants.RMSNorm(8)
    x = torch.randn(4, 8) * 300
    expected = x / torch.sqrt((x * x).mean(-1, keepdim=True) + norm.eps)
    torch.testing.assert_close(norm(x), expected)
    half = norm(x.half())  # squares of 300 overflow nothing in float32; in half they would
    assert half.dtype == torch.float16 and torch.isfinite(half).all()
    torch.testing.assert_close(half.float(), expected, rtol=2e-3, atol=2e-3)
    _, lab = frozen_and_lab(Variant(norm="rms"))
    reference, _ = frozen_and_lab()
    removed = sum(p.numel() for p in reference.parameters()) - sum(p.numel() for p in lab.parameters())
    assert removed == (2 * CFG.n_layers + 1) * CFG.d_model  # one beta per norm


def test_parameter_counts_of_the_bias_and_final_norm_switches():
    reference, _ = frozen_and_lab()
    base = sum(p.numel() for p in reference.parameters())
    d, f, n = CFG.d_model, CFG.d_ff, CFG.n_layers
    count = lambda v: sum(p.numel() for p in LabLM(CFG, v).parameters())
    assert count(Variant(ffn_bias=False)) == base - n * (f + d)
    assert count(Variant(attention_bias=True)) == base + n * 4 * d
    assert count(Variant(final_norm="none")) == base - 2 * d
    assert count(Variant(final_norm="twice")) == base + 2 * d
    assert count(Variant(final_norm="after_head")) == base - 2 * d + 2 * CFG.vocab_size
    assert count(Variant(positions="rope")) == base - CFG.block_size * d


def test_unscaled_init_multiplies_only_the_residual_writers_back():
    _, scaled = frozen_and_lab()
    _, plain = frozen_and_lab(Variant(scaled_init=False))
    for (name, a), b in zip(scaled.named_parameters(), plain.parameters()):
        factor = math.sqrt(2 * CFG.n_layers) if name.endswith(variants.frozen.RESIDUAL_WRITERS) else 1.0
        torch.testing.assert_close(b, a * factor, msg=name)


def test_norm_none_removes_every_norm_and_block_norm_adds_one_before_every_block():
    d, n = CFG.d_model, CFG.n_layers
    _, frozen_lab = frozen_and_lab()
    _, bare = frozen_and_lab(Variant(norm="none"))
    norms = (variants.frozen.LayerNorm, variants.RMSNorm)
    assert not any(isinstance(m, norms) for m in bare.modules())
    assert sum(p.numel() for p in frozen_lab.parameters()) - sum(p.numel() for p in bare.parameters()) == (4 * n + 2) * d
    _, stacked = frozen_and_lab(Variant(block_norm=True))
    assert sum(p.numel() for p in stacked.parameters()) - sum(p.numel() for p in frozen_lab.parameters()) == 2 * n * d
    seen = []
    hooks = [block.register_forward_pre_hook(lambda module, args: seen.append(args[0])) for block in stacked.blocks]
    stacked(batch()[0])
    for hook in hooks:
        hook.remove()
    for stream in seen:  # every block reads a normalised stream: mean 0, std 1 at every position (eps aside)
        torch.testing.assert_close(stream.mean(-1), torch.zeros(stream.shape[:-1]), atol=1e-5, rtol=0)
        torch.testing.assert_close(stream.std(-1, unbiased=False), torch.ones(stream.shape[:-1]), atol=0.05, rtol=0)


def test_without_positions_one_layer_reads_its_prefix_as_a_bag_and_two_layers_do_not():
    idx, _ = batch()
    shuffled = idx.clone()
    shuffled[:, :-1] = idx[:, :-1].flip(1)  # the same earlier tokens in another order, the last one kept

    def last_logits(n_layers, positions, tokens):
        cfg = Config(**{**CFG.__dict__, "n_layers": n_layers})
        model = variants.build(cfg, Variant(positions=positions), seed=0)
        return model(tokens).logits[:, -1]

    assert not hasattr(variants.build(CFG, Variant(positions="none")), "position_embedding")
    torch.testing.assert_close(last_logits(1, "none", idx), last_logits(1, "none", shuffled), rtol=1e-5, atol=1e-5)
    # a second layer reads each earlier position's own prefix, whose length the causal mask gives away
    assert not torch.allclose(last_logits(2, "none", idx), last_logits(2, "none", shuffled), atol=1e-5)
    assert not torch.allclose(last_logits(1, "learned", idx), last_logits(1, "learned", shuffled), atol=1e-5)


def test_time_axis_norm_leaks_the_future_and_feature_norm_does_not():
    idx, _ = batch()
    changed = idx.clone()
    changed[:, -1] = (changed[:, -1] + 1) % CFG.vocab_size
    for variant, leaks in ((Variant(), False), (Variant(norm_axis="time"), True)):
        _, lab = frozen_and_lab(variant)
        before, after = lab(idx).logits[:, :-1], lab(changed).logits[:, :-1]
        assert (not torch.allclose(before, after, atol=1e-6)) == leaks, variant


def test_rope_is_causal_relative_and_ntk_changes_only_long_sequences():
    variant = Variant(positions="rope")
    _, lab = frozen_and_lab(variant)
    q = torch.randn(1, 1, 6, CFG.d_model // CFG.n_heads)
    # a rotation by position: the dot product of q at p and k at p' depends on p - p' only
    a = variants.apply_rope(q, 0, variant)
    b = variants.apply_rope(q, 5, variant)
    dot = lambda t, i, j: (t[0, 0, i] * t[0, 0, j]).sum()
    torch.testing.assert_close(dot(a, 0, 2), dot(b, 0, 2), rtol=1e-5, atol=1e-5)
    assert not torch.allclose(dot(a, 0, 2), (q[0, 0, 0] * q[0, 0, 2]).sum(), atol=1e-4)
    torch.testing.assert_close(a.norm(dim=-1), q.norm(dim=-1), rtol=1e-5, atol=1e-5)
    idx, _ = batch(length=16)
    short = lab(idx[:, :8]).logits
    variants.retarget(lab, positions="rope_ntk", train_length=8)
    torch.testing.assert_close(lab(idx[:, :8]).logits, short)  # within the training length: the same
    assert not torch.allclose(lab(idx).logits[:, :8], short, atol=1e-6)  # past it, the base grows


def test_grouped_query_attention_shares_each_key_value_head_and_caches_only_those():
    d, h, n = CFG.d_model, CFG.n_heads, CFG.n_layers
    _, full = frozen_and_lab()
    _, grouped = frozen_and_lab(Variant(kv_heads=2))
    head_dim = d // h
    assert sum(p.numel() for p in full.parameters()) - sum(p.numel() for p in grouped.parameters()) == n * 2 * (h - 2) * head_dim * d
    idx, _ = batch()
    out = grouped(idx, use_cache=True)
    assert out.past_key_values[0][0].shape == (3, 2, idx.shape[1], head_dim)  # half the heads of MHA's cache
    # the same model run step by step through its cache gives the same logits
    step = grouped(idx[:, :-1], use_cache=True)
    last = grouped(idx[:, -1:], past_key_values=step.past_key_values)
    torch.testing.assert_close(last.logits[:, -1], out.logits[:, -1], rtol=1e-5, atol=1e-5)
    # query heads 0 and 1 read key/value head 0: with equal queries their weights are equal
    attention = grouped.blocks[0].attention
    with torch.no_grad():
        attention.qkv.weight[head_dim:2 * head_dim] = attention.qkv.weight[:head_dim]
        attention.qkv.weight[3 * head_dim:4 * head_dim] = attention.qkv.weight[2 * head_dim:3 * head_dim]
    weights = grouped(idx, collect=True).attentions[0]
    torch.testing.assert_close(weights[:, 0], weights[:, 1])
    torch.testing.assert_close(weights[:, 2], weights[:, 3])
    assert not torch.allclose(weights[:, 0], weights[:, 2])
    with pytest.raises(ValueError, match="divide"):
        LabLM(CFG, Variant(kv_heads=3))


def test_swiglu_gates_the_ffn_and_its_matched_width_keeps_the_parameter_count():
    d, f = CFG.d_model, CFG.d_ff
    cfg = Config(**{**CFG.__dict__, "d_ff": variants.swiglu_width(d, f)})
    standard = sum(p.numel() for p in LabLM(CFG).parameters())
    gated = variants.build(cfg, Variant(ffn="swiglu"), seed=0)
    difference = sum(p.numel() for p in gated.parameters()) - standard
    assert abs(difference) <= CFG.n_layers * 3 * d / 2  # within half a hidden unit per layer
    ffn = gated.blocks[0].feedforward
    x = torch.randn(2, 5, d)
    gate, up = (x @ ffn.fc1.weight.T).chunk(2, dim=-1)
    torch.testing.assert_close(ffn(x), (torch.nn.functional.silu(gate) * up) @ ffn.fc2.weight.T)
    # fc2 still writes into the residual stream, so the scaled init reaches it
    assert ffn.fc2.weight.std() < 0.02 / math.sqrt(2 * CFG.n_layers) * 1.5


def test_a_tied_head_is_the_token_embedding_and_trains_as_one_matrix():
    _, untied = frozen_and_lab()
    _, tied = frozen_and_lab(Variant(tied_head=True))
    assert sum(p.numel() for p in untied.parameters()) - sum(p.numel() for p in tied.parameters()) == CFG.vocab_size * CFG.d_model
    assert tied.head.weight is tied.token_embedding.weight
    idx, targets = batch()
    tied(idx, targets).loss.backward()
    assert tied.token_embedding.weight.grad is not None
    torch.optim.SGD(tied.parameters(), lr=1.0).step()
    assert tied.head.weight is tied.token_embedding.weight


def test_relu_and_eps_switches():
    _, lab = frozen_and_lab(Variant(activation="relu", eps=1.0))
    assert isinstance(lab.blocks[0].feedforward.activation, torch.nn.ReLU)
    assert all(m.eps == 1.0 for _, m in diagnostics.norm_modules(lab))


def test_an_unknown_setting_is_refused():
    with pytest.raises(ValueError, match="placement"):
        Variant(placement="middle")
    with pytest.raises(ValueError, match="train_length"):
        Variant(positions="rope_ntk")
    with pytest.raises(ValueError, match="ffn"):
        Variant(ffn="geglu")


# --- diagnostics -----------------------------------------------------------------------------------


def test_adjacent_kl_is_zero_for_a_constant_output_and_the_kl_formula_otherwise():
    same = torch.randn(1, 1, 7).expand(2, 5, 7)
    assert diagnostics.adjacent_kl(same) == pytest.approx(0.0, abs=1e-12)
    logits = torch.log(torch.tensor([[[0.5, 0.5], [0.9, 0.1]]]))
    expected = 0.9 * math.log(0.9 / 0.5) + 0.1 * math.log(0.1 / 0.5)  # KL(p_1 || p_0)
    assert diagnostics.adjacent_kl(logits) == pytest.approx(expected, rel=1e-6)  # float32 logits


def test_attention_entropy_is_one_for_uniform_and_zero_for_one_hot_weights():
    T = 6
    uniform = torch.tril(torch.ones(T, T)) / torch.arange(1, T + 1)[:, None]
    diagonal = torch.eye(T)
    weights = torch.stack([uniform, diagonal])[None]  # [1, 2 heads, T, T]
    assert diagnostics.attention_entropy(weights) == pytest.approx([1.0, 0.0], abs=1e-6)  # float32 weights


def test_norm_input_stats_reads_what_each_norm_reads():
    _, lab = frozen_and_lab()
    idx, _ = batch()
    stats = diagnostics.norm_input_stats(lab, idx)
    assert [s["name"] for s in stats] == [n for n, _ in diagnostics.norm_modules(lab)]
    first = (lab.token_embedding(idx) + lab.position_embedding.weight[: idx.shape[1]]).double()
    assert stats[0]["abs_mean"] == pytest.approx(first.mean(-1).abs().mean().item(), rel=1e-6)
    assert stats[0]["std"] == pytest.approx(first.std(-1, unbiased=False).mean().item(), rel=1e-6)
    assert stats[0]["ratio"] == pytest.approx(stats[0]["abs_mean"] / stats[0]["std"])


def test_ffn_memory_counts_dead_and_always_active_slots_and_duplicate_keys():
    _, lab = frozen_and_lab()
    fc1 = lab.blocks[0].feedforward.fc1
    with torch.no_grad():
        fc1.bias[0] = -1e4  # never active
        fc1.bias[1:] = 1e4  # always active
        fc1.weight[3] = fc1.weight[2] * 5  # the same key direction
    itos = [chr(0x4E00 + i) for i in range(CFG.vocab_size)]
    idx, _ = batch()
    layer = diagnostics.ffn_memory(lab, idx, itos, top=2)[0]
    f = CFG.d_ff
    assert layer["never_active"] == pytest.approx(1 / f)
    assert layer["activation_rate"] == pytest.approx((f - 1) / f)
    assert layer["key_cosine_max"] == pytest.approx(1.0, abs=1e-9)
    assert len(layer["top_characters"]) == 2
    assert all(char in itos for chars in layer["top_characters"].values() for char, _ in chars)


def test_residual_profile_measures_the_stream_and_leaves_the_models_gradients_alone():
    _, lab = frozen_and_lab()
    idx, targets = batch()
    profile = diagnostics.residual_profile(lab, idx, targets)
    assert all(p.grad is None for p in lab.parameters())
    assert len(profile["activation_std"]) == len(profile["grad_norm"]) == CFG.n_layers + 1
    out = lab(idx, targets, collect=True)
    grads = torch.autograd.grad(out.loss, out.hidden_states)
    assert profile["grad_norm"] == pytest.approx([g.norm().item() for g in grads], rel=1e-5)
    assert profile["activation_std"] == pytest.approx([h.std().item() for h in out.hidden_states], rel=1e-6)


# --- the runner: every lab at its tiny size ---------------------------------------------------------


@pytest.fixture
def lab_env(tmp_path, monkeypatch):
    monkeypatch.setenv("HERO_LABS_DIR", str(tmp_path))
    monkeypatch.setenv("HERO_LAB_CORPUS", "fixture")  # what a fresh clone has
    return tmp_path


@pytest.mark.parametrize("name", list(labs.all_labs()))
def test_every_lab_runs_its_tiny_grid_and_writes_json_plots_and_claims(name, lab_env, capsys):
    report = labs.run(name, "tiny", progress=False, table=True)
    folder = lab_env / name / "tiny"
    assert report.folder == folder
    saved = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    lab = labs.get(name)
    setting = lab.settings["tiny"]
    assert saved["seeds"] == setting["seeds"]
    # several seeds, unless nothing in the lab is random (every claim judged exactly or on its own interval)
    assert len(setting["seeds"]) >= 2 or all(claim["per_seed"].keys() == {"all"} or all(c["exact"] for c in claim["checks"])
                                             for claim in saved["claims"])
    assert list(saved["runs"]) == [f"{run.key}_s{seed}" for seed in setting["seeds"] for run in lab.runs(setting)]
    assert saved["device"] == "cpu" and saved["corpus"] == "fixture" and saved["seconds"] > 0
    assert {"uniform", "unigram"} <= set(saved["baselines"])
    assert len(saved["claims"]) == len(lab.claims) >= 1
    for claim in saved["claims"]:
        assert claim["seed"] and claim["per_seed"] and claim["zh"]
        assert claim["held"] in (True, False, None) and claim["verdict"].split(":")[0] in evidence.VERDICTS_ZH
        for check in claim["checks"]:  # every check over every seed (a pooled check: one value)
            assert len(check["values"]) in (1, len(setting["seeds"]))
    for seed in setting["seeds"]:  # a seed view is one seed's grid, keyed as the lab names its runs
        view = report.view(seed)
        assert list(view["runs"]) == [run.key for run in lab.runs(setting)] and view["setting"]["seed"] == seed
    assert saved["plots"] and all(path.endswith(".png") and (folder / path.rsplit("/", 1)[-1]).stat().st_size > 1000
                                  for path in saved["plots"])
    for run in saved["runs"].values():
        assert (folder / "runs" / f"{run['key']}.json").is_file()
    printed = capsys.readouterr().out
    assert "seed 0 (tiny)" in printed and f"lab {name} (tiny):" in printed.splitlines()[-1]
    assert labs.saved(name, "tiny").results == saved


def test_a_second_run_reuses_finished_runs_and_a_changed_setting_redoes_them(lab_env):
    lab = labs.get("residual_ablation")
    labs.run_lab(lab, "tiny", progress=False, log=lambda line: None)
    calls = []
    original = lab.execute
    counted = runner.Lab(**{**lab.__dict__, "execute": lambda *args: calls.append(args) or original(*args)})
    lines = []
    counted_report = runner.run_lab(counted, "tiny", progress=False, log=lines.append)
    assert calls == [] and "8 already done" in lines[0]
    tiny = lab.settings["tiny"]
    more_seeds = runner.Lab(**{**counted.__dict__, "settings": {**lab.settings, "tiny": {**tiny, "seeds": [0, 1, 2]}}})
    runner.run_lab(more_seeds, "tiny", progress=False, log=lambda line: None)
    assert len(calls) == 4 and {args[1]["seed"] for args in calls} == {2}  # a seed added: only its runs are run
    changed = runner.Lab(**{**counted.__dict__, "settings": {**lab.settings, "tiny": {**tiny, "steps": 3}}})
    runner.run_lab(changed, "tiny", progress=False, log=lambda line: None)
    assert len(calls) == 4 + 8
    assert counted_report.results["runs"].keys() == {f"{run.key}_s{seed}" for seed in tiny["seeds"] for run in lab.runs(tiny)}


def test_a_run_on_the_fixture_is_not_reused_for_the_full_corpus(lab_env, monkeypatch):
    lab = labs.get("seed004_demo")
    runner.run_lab(lab, "tiny", progress=False, log=lambda line: None)  # HERO_LAB_CORPUS=fixture
    stored = lab_env / "seed004_demo" / "tiny" / "runs" / "course_s0.json"
    value = json.loads(stored.read_text(encoding="utf-8"))
    value["corpus"] = "full"  # as if made on the full corpus: the fixture run must redo it
    stored.write_text(json.dumps(value), encoding="utf-8")
    lines = []
    runner.run_lab(lab, "tiny", progress=False, log=lines.append)
    assert f"{len(runner.seeded_runs(lab.settings['tiny'], lab.runs)) - 1} already done" in lines[0]
    assert json.loads(stored.read_text(encoding="utf-8"))["corpus"] == "fixture"


def test_no_chapter_release_carries_the_labs():
    for assignment in registry.ASSIGNMENTS.values():
        assert not (registry.REPO_ROOT / registry.RELEASE_DIR / assignment.id / registry.PACKAGE / "labs").exists()


def test_cli_lists_the_labs_and_refuses_unknown_ones(capsys):
    from autograder import cli

    assert cli.main(["lab", "list"]) == 0
    listed = capsys.readouterr().out
    assert all(name in listed for name in labs.all_labs())
    assert cli.main(["lab", "run", "no_such_lab"]) == 2
    assert "no lab named 'no_such_lab'" in capsys.readouterr().err


def test_cli_refuses_cuda_without_a_gpu(capsys, lab_env):
    from autograder import cli

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    assert cli.main(["lab", "run", "seed004_demo", "--tiny", "--device", "cuda"]) == 1
    assert "no CUDA device" in capsys.readouterr().err


# --- the notebooks and their release ----------------------------------------------------------------

LAB_NOTEBOOKS = sorted((registry.COURSE_DIR / release.LABS).glob("*.ipynb"))


def test_every_lab_has_a_notebook_and_every_notebook_a_lab():
    assert sorted(p.stem for p in LAB_NOTEBOOKS) == sorted(labs.all_labs())


@pytest.mark.parametrize("path", LAB_NOTEBOOKS, ids=lambda p: p.stem)
def test_lab_notebook_runs_top_to_bottom_at_the_tiny_size(path, lab_env, monkeypatch):
    import nbformat
    from nbclient import NotebookClient

    monkeypatch.setenv("HERO_LAB_MODE", "tiny")
    notebook = nbformat.read(str(path), as_version=4)
    NotebookClient(notebook, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    source = "\n".join(cell.source for cell in notebook.cells)
    assert f'labs.run("{path.stem}")' in source and "labs.show(report)" in source and "prediction" in source
    assert any(o.output_type == "display_data" and "image/png" in o.get("data", {}) for o in outputs), "no plot shown"
    assert (lab_env / path.stem / "tiny" / "results.json").is_file()


def test_the_labs_release_has_every_notebook_without_outputs_and_the_complete_package():
    released = registry.REPO_ROOT / registry.RELEASE_DIR / release.LABS
    assert sorted(p.name for p in released.glob("*.ipynb")) == [p.name for p in LAB_NOTEBOOKS]
    for path in released.glob("*.ipynb"):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        assert all(not c.get("outputs") for c in cells if c["cell_type"] == "code")
    package = released / registry.PACKAGE
    assert (package / "labs" / "runner.py").is_file()
    stubs = [f"raise NotImplementedError('{e.id}')" for e in registry.all_exercises()]
    for module in package.rglob("*.py"):
        text = module.read_text(encoding="utf-8")
        assert not [stub for stub in stubs if stub in text], module


def test_hero_start_labs_copies_the_labs_release(tmp_path, capsys):
    from autograder import cli

    assert cli.main(["start", "labs", str(tmp_path / "mine")]) == 0
    assert (tmp_path / "mine" / registry.PACKAGE / "labs" / "variants.py").is_file()
    assert cli.main(["start", "nothing", str(tmp_path / "other")]) == 2
    assert "no assignment 'nothing'" in capsys.readouterr().err


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device here: benchmarks/cuda_check.py runs the labs on "
                                                        "cuda where a GPU is lent")
def test_the_default_variant_computes_on_cuda_what_the_frozen_model_computes_on_the_cpu():
    reference, lab = frozen_and_lab()
    idx, targets = batch()
    torch.testing.assert_close(lab.cuda()(idx.cuda(), targets.cuda()).logits.cpu(), reference(idx, targets).logits,
                               rtol=1e-4, atol=1e-5)


def test_the_claims_report_has_a_row_per_claim_with_the_saved_verdicts(lab_env):
    labs.run("seed004_demo", "tiny", progress=False, log=lambda line: None)
    table = labs.claims_markdown(modes=("tiny",), source="build")
    rows = [line for line in table.split("\n\n")[0].splitlines()[2:]]  # after the header and its rule
    assert len(rows) == sum(len(lab.claims) for lab in labs.all_labs().values())
    demo_rows = [row for row in rows if row.startswith("| seed004_demo |")]
    assert demo_rows and all("not run" not in row and "2 seeds" in row for row in demo_rows)
    assert all("not run" in row for row in rows if not row.startswith("| seed004_demo |"))
    assert "| seed004_demo | tiny | 2 |" in table  # the timing table, with the seeds


def test_a_record_is_judged_again_by_the_report_and_refused_when_the_setting_or_grid_changed(lab_env, monkeypatch):
    monkeypatch.setattr(runner, "RECORDED", lab_env / "recorded")
    lab = labs.get("seed004_demo")
    report = labs.run(lab.name, "tiny", progress=False, log=lambda line: None)
    path = labs.record(lab, "tiny")
    recorded = json.loads(path.read_text(encoding="utf-8"))
    assert "claims" not in recorded and "plots" not in recorded and recorded["runs"].keys() == report.results["runs"].keys()
    again = runner.load_recorded(lab, "tiny")
    assert [c["verdict"] for c in again.claims] == [c["verdict"] for c in report.claims]
    assert [c["checks"] for c in again.claims] == [c["checks"] for c in report.claims]
    changed = runner.Lab(**{**lab.__dict__, "settings": {**lab.settings, "tiny": {**lab.settings["tiny"], "n_layers": 3}}})
    assert runner.load_recorded(changed, "tiny") is None  # a record of another setting is not reported
    grown = runner.Lab(**{**lab.__dict__, "runs": lambda setting: [*lab.runs(setting), runner.Run("extra", {})]})
    assert runner.load_recorded(grown, "tiny") is None  # nor one that lacks a run the grid has now
    with pytest.raises(ValueError, match="another setting"):
        labs.record(changed, "tiny")


def test_the_committed_records_reproduce_the_claims_table_in_docs_labs_md():
    """docs/labs.md carries `hero lab report`'s output: the committed runs judged by today's claims."""
    table = labs.report_markdown()
    docs = (registry.REPO_ROOT / "docs" / "labs.md").read_text(encoding="utf-8")
    assert table in docs, "docs/labs.md is stale: paste the output of `hero lab report` into it"


# --- the decision rule over seeds, proven both ways ------------------------------------------------


def decided(checks_per_seed):
    return evidence.summarise(checks_per_seed)[1]


def test_a_difference_inside_its_interval_is_undecided_and_outside_it_decides():
    assert decided([[evidence.more("gap", v, 0)] for v in (0.30, 0.31, 0.29)]) == "held"
    assert decided([[evidence.more("gap", v, 0)] for v in (-0.30, -0.31, -0.29)]) == "not held"
    # mean 0.02 with a seed-to-seed spread of 0.08: the interval straddles 0
    assert decided([[evidence.more("gap", v, 0)] for v in (0.10, -0.06, 0.02)]) == "undecided"
    assert decided([[evidence.more("gap", 0.3, 0)]]) == "undecided"  # one seed has no interval
    mean, sd, low, high = evidence.t_interval([1.0, 2.0, 3.0])
    assert (mean, sd) == (2.0, 1.0) and high - mean == pytest.approx(4.302653 / math.sqrt(3))  # t(0.975, 2)


def test_a_claim_needs_every_check_and_a_regime_not_met_is_undecided_never_not_held():
    held, failed = evidence.less("a", 0.1, 1), evidence.less("b", 2.0, 1)
    assert decided([[held, held]] * 3) == "held"
    assert decided([[held, failed]] * 3) == "not held"
    untrained = evidence.trained("pre-LN", 5.6, 5.672)  # only 0.07 below the unigram baseline
    assert untrained.regime == evidence.UNDER_TRAINED
    assert decided([[untrained, failed]] * 3) == "undecided: under-trained"
    assert decided([[evidence.trained("pre-LN", 4.2, 5.672), failed]] * 3) == "not held"
    assert decided([[evidence.report("figure", 1.0)]] * 3) == "not judged"
    assert decided([[evidence.seed_config("quick"), held]] * 3) == "undecided: not the seed's configuration"
    assert decided([[evidence.seed_config("full"), held]] * 3) == "held"


def test_the_noise_floor_is_judged_on_a_pooled_sigma_with_its_chi_square_interval():
    from hero_transformer.labs import context_noise

    def views(spread, seeds=3):  # five contexts; each context's seeds spread with sample sd `spread`
        setting = {"contexts": [8, 16, 32, 64, 128]}
        z = [i - (seeds - 1) / 2 for i in range(seeds)]
        scale = spread / math.sqrt(sum(v * v for v in z) / (seeds - 1))
        return [fake_results(setting, [({"train_length": t}, {"final_val": 5.0 - t / 1000 + o * scale})
                                       for t in setting["contexts"]]) for o in z]

    def verdict(*args):
        return evidence.summarise(None, context_noise.judge_noise(views(*args))[1])[1]

    # sigma 0.13: two single runs differ by 2 sigma / sqrt(pi) = 0.147 on average, inside the seed's 0.1-0.2
    assert verdict(0.13, 8) == "held"  # 35 degrees of freedom: sigma known to about ±25%
    assert verdict(0.13, 3) == "undecided"  # 10: the interval reaches past 0.2
    assert verdict(0.02, 3) == "not held" and verdict(0.4, 3) == "not held"


# --- the heart claims' judges, proven both ways on the seed's own figures ---------------------------


def fake_results(setting, runs, unigram=5.672, mode="full"):
    return {"setting": setting, "mode": mode, "baselines": {"uniform": math.log(1200), "unigram": unigram},
            "runs": {str(i): {"params": params, "result": result} for i, (params, result) in enumerate(runs)}}


JITTER = (0.0, 0.004, -0.003)  # three seeds a few thousandths apart: the seed's figures, repeated with noise


def over_seeds(judge, make, *values):
    """The verdict of `judge` over three seeds made by make(*values shifted by each JITTER)."""
    shift = lambda v, o: tuple(x + o for x in v) if isinstance(v, tuple) else v + o
    return decided([judge(make(*(shift(v, o) for v in values)))[1] for o in JITTER])


def test_the_stall_judge_holds_on_the_seeds_table_and_not_when_post_ln_trains():
    from hero_transformer.labs import depth_placement

    def results(post, pre=(4.213, 4.245, 4.370)):
        runs = [({"placement": p, "n_layers": d}, {"final_val": v})
                for d, pre_v, post_v in zip((6, 12, 24), pre, post)
                for p, v in (("pre", pre_v), ("post", post_v))]
        return fake_results({"depths": [6, 12, 24]}, runs)

    seed_post = (5.356, 5.357, 5.357)
    assert over_seeds(depth_placement.judge_stall, results, seed_post) == "held"
    assert over_seeds(depth_placement.judge_same_loss, results, seed_post) == "held"
    assert over_seeds(depth_placement.judge_stall, results, (4.6, 4.7, 5.357)) == "not held"  # post-LN trained at two depths
    assert over_seeds(depth_placement.judge_same_loss, results, (4.6, 4.7, 5.357)) == "not held"
    # pre-LN barely below the unigram baseline: no evidence either way
    assert over_seeds(depth_placement.judge_stall, results, seed_post, (5.6, 5.6, 5.6)) == "undecided: under-trained"


def test_the_no_residual_judge_holds_on_the_seeds_figures_and_not_when_depth_matters():
    from hero_transformer.labs import residual_ablation

    def results(without, mode="full"):
        runs = [({"residual": r, "n_layers": d}, {"final_val": v})
                for d, with_v, without_v in zip((2, 4, 12), (4.489, 4.520, 4.600), without)
                for r, v in ((True, with_v), (False, without_v))]
        return fake_results({"depths": [2, 4, 12]}, runs, mode=mode)

    assert over_seeds(residual_ablation.judge_same, results, (5.392, 5.392, 5.392)) == "held"
    assert over_seeds(residual_ablation.judge_two_layers, results, (5.392, 5.392, 5.392)) == "held"
    assert over_seeds(residual_ablation.judge_same, results, (4.9, 5.1, 5.392)) == "not held"
    assert over_seeds(residual_ablation.judge_gap, results, (5.392, 5.392, 5.392)) == "held"  # 0.90 / 0.87 / 0.79
    assert over_seeds(residual_ablation.judge_gap, results, (4.7, 4.7, 4.7)) == "not held"
    assert over_seeds(residual_ablation.judge_gap, lambda v: results(v, "quick"), (5.392,) * 3) == \
        "undecided: not the seed's configuration"


def test_the_init_growth_judge_holds_on_the_seeds_table_and_not_when_post_ln_grows():
    from hero_transformer.labs import init_profile

    def results(pre, post):
        runs = [({"placement": p, "n_layers": d, "scaled_init": False}, {"act_last_over_first": v})
                for d, pre_v, post_v in zip((6, 12, 24, 48), pre, post) for p, v in (("pre", pre_v), ("post", post_v))]
        return fake_results({"depths": [6, 12, 24, 48]}, runs)

    seed_pre = (2.57, 3.87, 5.68, 7.78)
    assert over_seeds(init_profile.judge_growth, results, seed_pre, (1.0, 1.0, 1.0, 1.0)) == "held"
    assert over_seeds(init_profile.judge_growth, results, seed_pre, (1.0, 1.2, 1.5, 2.0)) == "not held"  # post-LN grows
    assert over_seeds(init_profile.judge_growth, results, (2.6, 2.6, 2.5, 2.6), (1.0,) * 4) == "not held"  # pre-LN flat


def test_the_more_data_judge_holds_on_the_seeds_figures_and_not_when_more_text_helps():
    from hero_transformer.labs import more_data

    def results(post_4x, ratio=4.0):
        runs = [({"placement": p, "data_factor": f}, {"final_val": v, "data_ratio": r, "train_eval": v})
                for f, r, pre_v, post_v in ((1, 1.0, 4.4, 5.357), (4, ratio, 4.3, post_4x))
                for p, v in (("pre", pre_v), ("post", post_v))]
        return fake_results({"data_factors": [1, 4], "n_layers": 12}, runs)

    assert over_seeds(more_data.judge_no_help, results, 5.351) == "held"  # the seed's 5.357 -> 5.351
    assert over_seeds(more_data.judge_no_help, results, 5.1) == "not held"  # 4× text helps the stalled model
    assert over_seeds(more_data.judge_no_help, lambda v: results(v, ratio=1.0), 5.351) == \
        "undecided: not the seed's configuration"  # the fixture has no more poems


def test_the_critical_depth_judge_holds_when_the_gap_grows_with_depth_and_not_when_it_does_not():
    from hero_transformer.labs import init_depth

    def results(plain, scaled=(4.3, 4.3, 4.35, 4.4)):
        runs = [({"n_layers": d, "scaled": version}, {"final_val": v, "last_stream_std": 1.0})
                for d, s, p in zip((8, 16, 32, 64), scaled, plain) for version, v in (("scaled", s), ("plain", p))]
        return fake_results({"depths": [8, 16, 32, 64]}, runs)

    assert over_seeds(init_depth.judge_critical_depth, results, (4.3, 4.31, 4.45, 4.7)) == "held"
    assert over_seeds(init_depth.judge_critical_depth, results, (4.3, 4.3, 4.35, 4.3)) == "not held"  # plain is better deep
    assert over_seeds(init_depth.judge_critical_depth, results, (4.5, 4.4, 4.4, 4.45)) == "not held"  # the gap shrinks
    assert over_seeds(init_depth.judge_critical_depth, results, (5.6,) * 4, (5.6,) * 4) == "undecided: under-trained"


def test_the_swiglu_gqa_and_tying_judges_decide_on_the_paired_differences():
    from hero_transformer.labs import ablation_table, modern_parts

    def parts(swiglu, gqa):
        runs = {key: {"params": {"d_ff": 172}, "result": {"final_val": v, "parameters": 1, "cache_per_token": c}}
                for key, v, c in (("course", 4.2, 6144), ("swiglu", swiglu, 6144), ("gqa", gqa, 3072))}
        return {**fake_results({"n_heads": 4, "kv_heads": 2}, []), "runs": runs}

    assert over_seeds(modern_parts.judge_swiglu, lambda s: parts(s, 4.2), 4.21) == "held"
    assert over_seeds(modern_parts.judge_swiglu, lambda s: parts(s, 4.2), 4.4) == "not held"
    assert over_seeds(modern_parts.judge_gqa, lambda g: parts(4.2, g), 4.19) == "held"
    assert over_seeds(modern_parts.judge_gqa, lambda g: parts(4.2, g), 4.3) == "not held"

    def tying(tied):
        runs = {key: {"params": {}, "result": {"final_val": v, "parameters": p}}
                for key, v, p in (("course", 4.2, 1_899_264), ("tied_head", tied, 1_745_664))}
        return {**fake_results({}, []), "runs": runs}

    assert over_seeds(ablation_table.judge_tying, tying, 4.15) == "held"  # untied slightly worse, as the seed says
    assert over_seeds(ablation_table.judge_tying, tying, 4.4) == "not held"

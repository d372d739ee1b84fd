"""The reference model keeps the frozen conventions of the course."""

import math

import pytest
import torch
import torch.nn.functional as F

from hero_transformer import model

CHAPTER = model.Config(vocab_size=32, block_size=64, d_model=64, n_heads=4, n_layers=2, d_ff=256, dropout=0.0)


def registered(module):
    return sum(p.numel() for p in module.parameters())


def test_chapter_configuration_registers_107776_parameters():
    assert registered(model.TransformerLM(CHAPTER)) == 107_776
    assert registered(model.TransformerBlock(CHAPTER)) == 49_728


@pytest.mark.parametrize("V,C,N,d,h,f", [(32, 64, 2, 64, 4, 256), (10, 6, 2, 4, 2, 8), (7, 5, 3, 6, 3, 10),
                                         (50, 11, 4, 12, 1, 12)])
def test_ledger_formula_equals_registered_count(V, C, N, d, h, f):
    lm = model.TransformerLM(model.Config(V, C, d, h, N, f, 0.0))
    assert model.parameter_count(V, C, N, d, f) == registered(lm)


def test_layer_norm_population_variance_eps_inside_root():
    norm = model.LayerNorm(2)
    out = norm(torch.tensor([1.0, 3.0]))
    assert out.tolist() == pytest.approx([-1 / math.sqrt(1 + 1e-5), 1 / math.sqrt(1 + 1e-5)], abs=1e-7)
    assert norm(torch.tensor([2.0, 2.0])).tolist() == [0.0, 0.0]
    x = torch.randn(2, 3, 8)
    assert torch.allclose(model.LayerNorm(8)(x), F.layer_norm(x, (8,), eps=1e-5), atol=1e-6)


def test_gelu_is_exact_not_tanh():
    x = torch.linspace(-5, 5, 101)
    assert torch.allclose(model.gelu(x), F.gelu(x), atol=1e-6)
    assert not torch.allclose(model.gelu(x), F.gelu(x, approximate="tanh"), atol=1e-5)


def test_projections_biases_and_head():
    lm = model.TransformerLM(CHAPTER)
    block = lm.blocks[0]
    assert block.attention.qkv.bias is None and block.attention.proj.bias is None
    assert block.feedforward.fc1.bias is not None and block.feedforward.fc2.bias is not None
    assert block.ln_attention is not block.ln_feedforward
    assert lm.blocks[0] is not lm.blocks[1]
    assert lm.head.weight.data_ptr() != lm.token_embedding.weight.data_ptr()
    assert lm.position_embedding.weight.shape == (64, 64)


def test_pre_ln_block_is_identity_with_zero_branches_and_causal():
    torch.manual_seed(0)
    block = model.TransformerBlock(model.Config(10, 6, 4, 2, 1, 8, 0.0)).eval()
    x = torch.randn(2, 3, 4)
    y, _ = block(x)
    changed = x.clone()
    changed[:, 2] += 1
    assert torch.allclose(block(changed)[0][:, :2], y[:, :2])
    with torch.no_grad():
        block.attention.proj.weight.zero_()
        block.feedforward.fc2.weight.zero_()
        block.feedforward.fc2.bias.zero_()
    assert torch.equal(block(x)[0], x)


def test_kv_cache_matches_the_full_forward():
    torch.manual_seed(0)
    lm = model.TransformerLM(CHAPTER).eval()
    idx = torch.randint(0, 32, (2, 10))
    full = lm(idx).logits
    first = lm(idx[:, :6], use_cache=True)
    second = lm(idx[:, 6:], past_key_values=first.past_key_values, use_cache=True)
    assert torch.allclose(torch.cat([first.logits, second.logits], dim=1), full, atol=1e-5)


def test_loss_and_too_long_sequences():
    lm = model.TransformerLM(CHAPTER)
    idx = torch.randint(0, 32, (2, 8))
    out = lm(idx, targets=idx)
    assert out.logits.shape == (2, 8, 32) and out.loss.ndim == 0
    with pytest.raises(ValueError, match="block_size=64"):
        lm(torch.zeros(1, 65, dtype=torch.long))


def test_dropout_zero_is_deterministic_and_eval_disables_dropout():
    lm = model.TransformerLM(CHAPTER)
    idx = torch.randint(0, 32, (1, 5))
    assert torch.equal(lm(idx).logits, lm(idx).logits)
    noisy = model.TransformerLM(model.Config(32, 64, 64, 4, 2, 256, 0.5)).eval()
    assert torch.equal(noisy(idx).logits, noisy(idx).logits)


def test_heads_must_divide_width():
    with pytest.raises(ValueError, match="n_heads"):
        model.Config(10, 6, 6, 4, 1, 8)

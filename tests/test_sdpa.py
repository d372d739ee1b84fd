"""The fused-kernel dispatch (hero_transformer/sdpa.py) computes what chapter 4's hand-written
attention computes: logits, loss, every gradient and the cache, with and without past keys."""

import pytest
import torch

from hero_transformer import model, sdpa

CFG = model.Config(vocab_size=50, block_size=16, d_model=32, n_heads=4, n_layers=2, d_ff=64, dropout=0.0)


def twins():
    torch.manual_seed(0)
    manual = model.TransformerLM(CFG)
    fused = model.TransformerLM(CFG)
    fused.load_state_dict(manual.state_dict())
    return manual, sdpa.use_sdpa(fused)


def test_use_sdpa_swaps_every_attention_and_keeps_the_state_dict():
    manual, fused = twins()
    kinds = {type(block.attention) for block in fused.blocks}
    assert kinds == {sdpa.SDPAttention}
    assert all(torch.equal(a, b) for a, b in zip(manual.state_dict().values(), fused.state_dict().values()))


def test_same_logits_loss_and_gradients():
    manual, fused = twins()
    idx = torch.randint(CFG.vocab_size, (3, 11), generator=torch.Generator().manual_seed(1))
    targets = torch.roll(idx, -1, dims=1)
    outs = [lm(idx, targets) for lm in (manual, fused)]
    torch.testing.assert_close(outs[1].logits, outs[0].logits, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(outs[1].loss, outs[0].loss, rtol=1e-6, atol=1e-6)
    for out in outs:
        out.loss.backward()
    for (name, a), b in zip(manual.named_parameters(), fused.parameters()):
        torch.testing.assert_close(b.grad, a.grad, rtol=1e-4, atol=1e-6, msg=name)


@pytest.mark.parametrize("prompt,step", [(5, 1), (4, 3)])
def test_same_outputs_and_cache_when_keys_are_cached(prompt, step):
    """Past keys make the mask a slice that is not top-left aligned: a chunk of `step` new
    tokens after a cached prompt must see the whole prompt."""
    manual, fused = twins()
    idx = torch.randint(CFG.vocab_size, (2, prompt + step), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        results = []
        for lm in (manual, fused):
            first = lm(idx[:, :prompt], use_cache=True)
            results.append(lm(idx[:, prompt:], past_key_values=first.past_key_values, use_cache=True))
    torch.testing.assert_close(results[1].logits, results[0].logits, rtol=1e-5, atol=1e-6)
    for layer_m, layer_f in zip(results[0].past_key_values, results[1].past_key_values):
        for a, b in zip(layer_m, layer_f):
            torch.testing.assert_close(b, a)

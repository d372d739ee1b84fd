"""The diagnostics of seed 003's troubleshooting chapter, one function each.

They read a LabLM (labs/variants.py) through `forward(..., collect=True)` or forward hooks and
return plain numbers and lists, so the labs can store them in JSON:

- residual_profile: the residual stream's activation std before each block and after each block,
  and the gradient of the loss with respect to it (norm and std), plus each block's parameter
  gradient norm and the token embedding's;
- adjacent_kl: the mean KL divergence between the next-token distributions of neighbouring
  positions (near 0: every position predicts the same distribution, the context is unused);
- attention_entropy: each head's attention entropy divided by its maximum, ln(number of visible
  keys), averaged over queries (seed 003: 0.5-0.9 healthy, < 0.1 saturated, > 0.99 uniform);
- norm_input_stats: the mean and std of what every normalisation layer reads;
- ffn_memory: the FFN read as a key-value memory (fc1's rows are the keys): slots never active,
  the mean activation rate, key cosine similarity, the top characters of each slot.
"""

import torch
import torch.nn.functional as F

from .. import model as frozen
from .variants import RMSNorm


def residual_profile(model, idx, targets):
    """One forward and backward pass on (idx, targets); the model's gradients are left as they
    were.  Lists have N+1 entries: the stream entering block 0 (embeddings), then after each
    block."""
    saved = [p.grad for p in model.parameters()]
    model.zero_grad(set_to_none=True)
    out = model(idx, targets, collect=True)
    for state in out.hidden_states:
        state.retain_grad()
    out.loss.backward()
    blocks = [torch.sqrt(sum(p.grad.pow(2).sum() for p in block.parameters() if p.grad is not None)).item()
              for block in model.blocks]
    profile = {
        "activation_std": [s.detach().std().item() for s in out.hidden_states],
        "grad_norm": [s.grad.norm().item() for s in out.hidden_states],
        "grad_std": [s.grad.std().item() for s in out.hidden_states],
        "block_grad_norm": blocks,
        "embedding_grad_norm": model.token_embedding.weight.grad.norm().item(),
        "loss": out.loss.item(),
    }
    for parameter, grad in zip(model.parameters(), saved):
        parameter.grad = grad
    return profile


def adjacent_kl(logits):
    """mean over sequences and t of KL(p_{t+1} || p_t), p_t = softmax(logits[:, t]) ([B, T, V])."""
    logp = F.log_softmax(logits.double(), dim=-1)
    later, earlier = logp[:, 1:], logp[:, :-1]
    return (later.exp() * (later - earlier)).sum(-1).mean().item()


def attention_entropy(weights):
    """[B, h, T, T] causal attention weights -> [h] list: each head's entropy over the keys
    divided by ln(keys visible to that query), averaged over the batch and over queries 1..T-1
    (query 0 sees one key: its entropy is 0 out of a maximum of 0)."""
    w = weights.double()
    entropy = -(w * torch.log(w.clamp_min(1e-300))).sum(-1)  # [B, h, T]
    visible = torch.arange(1, w.shape[-2] + 1, dtype=torch.float64, device=w.device)
    normalised = entropy[..., 1:] / torch.log(visible[1:])
    return normalised.mean(dim=(0, 2)).tolist()


def norm_modules(model):
    return [(name, m) for name, m in model.named_modules() if isinstance(m, (frozen.LayerNorm, RMSNorm))]


@torch.no_grad()
def norm_input_stats(model, idx):
    """For every normalisation layer, in order: {"name", "abs_mean", "std", "ratio"}: the
    per-position mean of its input (absolute, averaged over positions), the per-position std,
    and their ratio (seed 003 §2.8.2: about 2% in its trained models, which is why RMSNorm's
    dropping the centring costs little)."""
    found = []

    def hook(name):
        def record(module, inputs, output):
            x = inputs[0].double()
            found.append({"name": name, "abs_mean": x.mean(-1).abs().mean().item(),
                          "std": x.std(-1, unbiased=False).mean().item()})
        return record

    handles = [m.register_forward_hook(hook(name)) for name, m in norm_modules(model)]
    try:
        model(idx)
    finally:
        for handle in handles:
            handle.remove()
    for entry in found:
        entry["ratio"] = entry["abs_mean"] / entry["std"]
    return found


@torch.no_grad()
def ffn_memory(model, idx, itos=None, top=5, positions_per_slot=50):
    """Every block's FFN as a key-value memory, over the tokens of `idx` ([B, T]).

    A slot (hidden unit) is active at a position when its activation is positive.  Per layer:
    "never_active" (the fraction of slots never active), "activation_rate" (the mean fraction of
    slots active per position), "key_cosine_mean" and "key_cosine_max" (over pairs of distinct
    rows of fc1.weight) and, with `itos`, "top_characters" of the `top` most active slots: the
    commonest characters among each slot's `positions_per_slot` strongest positions (the
    character read at that position)."""
    activations = []
    handles = [block.feedforward.activation.register_forward_hook(
        lambda module, inputs, output: activations.append(output.detach())) for block in model.blocks]
    try:
        model(idx)
    finally:
        for handle in handles:
            handle.remove()
    chars = idx.reshape(-1).tolist()
    layers = []
    for block, act in zip(model.blocks, activations):
        act = act.reshape(-1, act.shape[-1]).double()  # [positions, slots]
        active = act > 0
        keys = F.normalize(block.feedforward.fc1.weight.double(), dim=-1)
        cosine = keys @ keys.T
        off_diagonal = cosine[~torch.eye(len(keys), dtype=torch.bool)]
        layer = {"slots": act.shape[1], "never_active": (~active.any(0)).double().mean().item(),
                 "activation_rate": active.double().mean().item(),
                 "key_cosine_mean": off_diagonal.mean().item(), "key_cosine_max": off_diagonal.max().item(),
                 "max_activation": act.max().item()}
        if itos is not None:
            strongest = act.max(0).values.topk(min(top, act.shape[1])).indices
            layer["top_characters"] = {}
            for slot in strongest.tolist():
                where = act[:, slot].topk(min(positions_per_slot, act.shape[0])).indices.tolist()
                counts = {}
                for position in where:
                    char = itos[chars[position]]
                    counts[char] = counts.get(char, 0) + 1
                layer["top_characters"][slot] = sorted(counts.items(), key=lambda kv: -kv[1])[:5]
        layers.append(layer)
    return layers

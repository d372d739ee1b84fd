"""Correct chapter-8 exercise bodies written differently from the reference.

Every one must get full marks: they pin the probes and the tolerance to what each exercise asks,
not to how the reference happens to compute it.  Same conventions as faults.py.
"""

import math  # noqa: F401  (used by variant bodies)

import torch  # noqa: F401
import torch.nn.functional as F  # noqa: F401
from torch import nn  # noqa: F401

from autograder.registry import catalogue

CATALOGUE, variant = catalogue("correct")


@variant("get_batch", "one gather with an index grid (starts + arange)")
def index_grid_batch(data, block_size, batch_size, generator=None):
    starts = torch.randint(len(data) - block_size, (batch_size,), generator=generator)
    grid = starts[:, None] + torch.arange(block_size)[None, :]
    return data[grid.to(data.device)], data[(grid + 1).to(data.device)]


@variant("get_batch", "unfold into every window of T + 1, then split")
def unfold_batch(data, block_size, batch_size, generator=None):
    starts = torch.randint(len(data) - block_size, (batch_size,), generator=generator)
    windows = data.unfold(0, block_size + 1, 1)[starts.to(data.device)]
    return windows[:, :-1].contiguous(), windows[:, 1:].contiguous()


@variant("parameter_groups", "names of linear modules first, then one pass with a comprehension")
def names_first_groups(model, weight_decay):
    linear_weights = {f"{name}.weight" if name else "weight" for name, module in model.named_modules()
                      if isinstance(module, nn.Linear)}
    trainable = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    decay = [(n, p) for n, p in trainable if n in linear_weights]
    rest = [(n, p) for n, p in trainable if n not in linear_weights]
    return [{"params": [p for _, p in decay], "names": [n for n, _ in decay], "weight_decay": weight_decay},
            {"params": [p for _, p in rest], "names": [n for n, _ in rest], "weight_decay": 0.0}]


@variant("parameter_groups", "walking the modules with recurse=False and sorting back into named_parameters order")
def module_walk_groups(model, weight_decay):
    order = {id(p): i for i, (_, p) in enumerate(model.named_parameters())}
    found = {}
    for module_name, module in model.named_modules():
        for name, parameter in module.named_parameters(recurse=False):
            if parameter.requires_grad and id(parameter) not in found:
                full = f"{module_name}.{name}" if module_name else name
                found[id(parameter)] = (full, parameter, isinstance(module, nn.Linear) and name == "weight")
    ranked = sorted(found.values(), key=lambda item: order[id(item[1])])
    groups = []
    for decays, value in ((True, weight_decay), (False, 0.0)):
        chosen = [(n, p) for n, p, d in ranked if d == decays]
        groups.append({"names": [n for n, _ in chosen], "params": [p for _, p in chosen], "weight_decay": value})
    return groups


@variant("lr_at", "a cosine through torch on float64, then float()")
def torch_cosine_lr(step, *, max_lr, min_lr, warmup_steps, total_steps):
    if step < 0 or warmup_steps > total_steps:
        raise ValueError(f"bad schedule: step={step}, warmup_steps={warmup_steps}, total_steps={total_steps}")
    if step < warmup_steps:
        return float(max_lr * (step + 1) / warmup_steps)
    span = max(1, total_steps - warmup_steps)
    progress = torch.tensor((step - warmup_steps) / span, dtype=torch.float64).clamp(0.0, 1.0)
    return float(min_lr + (max_lr - min_lr) * (torch.cos(math.pi * progress) + 1) / 2)


@variant("lr_at", "the cosine as cos^2 of half the angle")
def half_angle_lr(step, *, max_lr, min_lr, warmup_steps, total_steps):
    if step < 0:
        raise ValueError("step < 0")
    if warmup_steps > total_steps:
        raise ValueError("warmup_steps > total_steps")
    if step < warmup_steps:
        return (step + 1) / warmup_steps * max_lr
    if step >= total_steps and total_steps > warmup_steps:
        return float(min_lr)
    progress = min(1.0, (step - warmup_steps) / max(1, total_steps - warmup_steps))
    return min_lr + (max_lr - min_lr) * math.cos(math.pi * progress / 2) ** 2


@variant("train_step", "model.zero_grad() and the total norm through the returned tensor's float()")
def module_zero_grad_step(model, optimizer, inputs, targets, lr, max_grad_norm=1.0):
    for group in optimizer.param_groups:
        group.update(lr=lr)
    model.zero_grad()  # set_to_none=True is the default
    output = model(inputs, targets)
    if not math.isfinite(output.loss.item()):
        raise FloatingPointError(f"non-finite loss {output.loss.item()} (损失不是有限数)")
    output.loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(list(model.parameters()), max_norm=max_grad_norm)
    optimizer.step()
    return float(output.loss), float(norm)


@variant("train_step", "the check with torch.isnan | torch.isinf, the optimiser's own zero_grad default")
def isnan_isinf_step(model, optimizer, inputs, targets, lr, max_grad_norm=1.0):
    for group in optimizer.param_groups:
        group["lr"] = lr
    optimizer.zero_grad()
    loss = model(inputs, targets).loss
    if torch.isnan(loss) or torch.isinf(loss):
        value = loss.item()
        raise FloatingPointError(f"loss is {value}; 损失为 {value}")
    loss.backward()
    total = torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()
    return loss.detach().item(), total.item()


@variant("evaluate", "all windows at once by view, then chunks, summing per-token losses from the logits")
def chunked_view_evaluate(model, data, block_size, batch_size):
    windows = (len(data) - 1) // block_size
    x_all = data[: windows * block_size].view(windows, block_size)
    y_all = data[1 : windows * block_size + 1].view(windows, block_size)
    mode = model.training
    model.train(False)
    total = torch.zeros((), dtype=torch.float64)
    with torch.no_grad():
        for x, y in zip(x_all.split(batch_size), y_all.split(batch_size)):
            total += model(x, y).loss.double().cpu() * y.numel()
    model.train(mode)
    return (total / (windows * block_size)).item()


@variant("evaluate", "torch.inference_mode and a running mean")
def running_mean_evaluate(model, data, block_size, batch_size):
    T = block_size
    count = (len(data) - 1) // T
    previous = model.training
    model.eval()
    mean, seen = 0.0, 0
    try:
        with torch.inference_mode():
            for start in range(0, count, batch_size):
                stop = min(start + batch_size, count)
                x = torch.stack([data[i * T : i * T + T] for i in range(start, stop)])
                y = torch.stack([data[i * T + 1 : i * T + T + 1] for i in range(start, stop)])
                n = y.numel()
                mean += (model(x, y).loss.item() - mean) * n / (seen + n)
                seen += n
    finally:
        model.train(previous)
    return mean


@variant("next_token_probs", "sort for the threshold, where() for the mask, exp over the sum")
def sorted_threshold_probs(logits, temperature=1.0, top_k=None):
    if temperature < 0:
        raise ValueError("negative temperature")
    if top_k is not None and top_k < 1:
        raise ValueError("top_k < 1")
    if temperature == 0:
        out = torch.zeros_like(logits)
        return out.scatter(-1, logits.argmax(dim=-1, keepdim=True), 1.0)
    scaled = logits / temperature
    if top_k is not None:
        k = min(top_k, scaled.shape[-1])
        threshold = scaled.sort(dim=-1, descending=True).values[..., k - 1 : k]
        scaled = torch.where(scaled >= threshold, scaled, torch.full_like(scaled, float("-inf")))
    shifted = torch.exp(scaled - scaled.amax(dim=-1, keepdim=True))
    return shifted / shifted.sum(dim=-1, keepdim=True)


@variant("next_token_probs", "kthvalue on the negated logits, F.softmax")
def kthvalue_probs(logits, temperature=1.0, top_k=None):
    if temperature < 0 or (top_k is not None and top_k < 1):
        raise ValueError(f"temperature={temperature}, top_k={top_k}")
    if temperature == 0:
        return F.one_hot(torch.argmax(logits, dim=-1), num_classes=logits.shape[-1]).type_as(logits)
    if top_k is not None and top_k < logits.shape[-1]:
        threshold = -torch.kthvalue(-logits, top_k, dim=-1, keepdim=True).values
        logits = logits.masked_fill(logits < threshold, -math.inf)
    return F.softmax(logits / temperature, dim=-1)


@variant("generate", "a list of new tokens concatenated at the end, the cache kept as a tuple of outputs")
def list_generate(model, idx, max_new_tokens, temperature=1.0, top_k=None, use_cache=True, generator=None):
    if idx.size(1) + max_new_tokens > model.cfg.block_size:
        raise ValueError("prompt + new tokens > block_size (提示加新词元超过 block_size)")
    mode = model.training
    model.eval()
    new, cache, sequence = [], None, idx
    with torch.no_grad():
        for _ in range(max_new_tokens):
            if use_cache:
                feed = sequence if cache is None else new[-1]
                output = model(feed, past_key_values=cache, use_cache=True)
                cache = output.past_key_values
            else:
                output = model(sequence)
            last = output.logits[:, -1]
            if temperature == 0:
                token = torch.argmax(last, dim=-1).unsqueeze(-1)
            else:
                token = torch.multinomial(next_token_probs(last, temperature=temperature, top_k=top_k), num_samples=1,  # noqa: F821
                                          generator=generator)
            new.append(token)
            sequence = torch.cat([sequence, token], dim=-1)
    model.train(mode)
    return torch.cat([idx] + new, dim=1)


@variant("generate", "a preallocated output filled column by column")
def preallocated_generate(model, idx, max_new_tokens, temperature=1.0, top_k=None, use_cache=True, generator=None):
    B, T0 = idx.shape
    if T0 + max_new_tokens > model.cfg.block_size:
        raise ValueError(f"{T0} + {max_new_tokens} > block_size {model.cfg.block_size}")
    out = torch.empty(B, T0 + max_new_tokens, dtype=idx.dtype, device=idx.device)
    out[:, :T0] = idx
    was = model.training
    model.eval()
    past = None
    try:
        with torch.no_grad():
            for t in range(T0, T0 + max_new_tokens):
                if use_cache and past is not None:
                    result = model(out[:, t - 1 : t], None, past, True)
                else:
                    result = model(out[:, :t], None, None, use_cache)
                past = result.past_key_values if use_cache else None
                logits = result.logits[:, -1, :]
                if temperature == 0:
                    out[:, t] = logits.argmax(-1)
                else:
                    out[:, t] = torch.multinomial(next_token_probs(logits, temperature, top_k), 1,  # noqa: F821
                                                  generator=generator).squeeze(-1)
    finally:
        model.train(was)
    return out

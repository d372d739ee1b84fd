"""Correct chapter-7 exercise bodies written differently from the reference.

Every one must get full marks, also with the chapter's other exercises stubbed or faulty: they
pin the probes to what each exercise asks, not to how the reference happens to compute it.
`hero samples OUT` writes one sample per variant (`correct_<id>`).  Same conventions as
faults.py (the module-level names come from _proxies.py when the grader runs a body).
"""

import math  # noqa: F401  (used by variant bodies)

import torch  # noqa: F401
import torch.nn.functional as F  # noqa: F401
from torch import nn  # noqa: F401

from autograder.registry import catalogue

from ._proxies import (INIT_STD, RESIDUAL_WRITERS, LayerNorm, LMOutput, add_positions, embed, init_normal_,  # noqa: F401
                       parameter_count)

CATALOGUE, variant = catalogue("correct")


@variant("model_forward", "keyword arguments, zip over blocks and cache entries, loss from log_softmax")
def zipped_forward(self, idx, targets=None, past_key_values=None, use_cache=False):
    pasts = [None] * len(self.blocks) if past_key_values is None else list(past_key_values)
    start = 0 if past_key_values is None else pasts[0][0].size(-2)
    hidden = self.dropout(add_positions(embed(idx, weight=self.token_embedding.weight),
                                        self.position_embedding.weight, start=start))
    presents = []
    for block, past in zip(self.blocks, pasts):
        hidden, present = block(hidden, past_key_value=past, use_cache=use_cache)
        presents.append(present)
    logits = self.head(self.ln_f(hidden))
    loss = None
    if targets is not None:
        log_probs = torch.log_softmax(logits, dim=-1)
        loss = -log_probs.gather(-1, targets.unsqueeze(-1)).mean()
    return LMOutput(logits=logits, loss=loss, past_key_values=presents if use_cache else None)


@variant("model_forward", "an explicit index loop, cross entropy over [B, V, T]")
def indexed_forward(self, idx, targets=None, past_key_values=None, use_cache=False):
    past_length = past_key_values[0][0].shape[2] if past_key_values else 0
    tokens = embed(idx, self.token_embedding.weight)
    hidden = add_positions(tokens, self.position_embedding.weight, past_length)
    hidden = self.dropout(hidden)
    presents = [] if use_cache else None
    for i in range(len(self.blocks)):
        hidden, present = self.blocks[i](hidden, past_key_values[i] if past_key_values is not None else None, use_cache)
        if presents is not None:
            presents.append(present)
    normalised = self.ln_f(hidden)
    logits = self.head(normalised)
    loss = F.cross_entropy(logits.transpose(1, 2), targets) if targets is not None else None
    return LMOutput(logits, loss, presents)


@variant("init_weights", "modules() first, then one pass over named_parameters() by a kind table")
def kind_table_init(model, generator=None):
    kinds = {}
    for module in model.modules():
        if isinstance(module, (nn.Linear, nn.Embedding)):
            kinds[id(module.weight)] = "draw"
            if getattr(module, "bias", None) is not None:
                kinds[id(module.bias)] = "zero"
        elif isinstance(module, LayerNorm):
            kinds[id(module.weight)], kinds[id(module.bias)] = "one", "zero"
    scaled = INIT_STD * (2 * model.cfg.n_layers) ** -0.5
    for name, parameter in model.named_parameters():
        kind = kinds[id(parameter)]
        if kind == "draw":
            writer = name.split(".")[-3:-1] in (["attention", "proj"], ["feedforward", "fc2"])
            init_normal_(parameter, scaled if writer else INIT_STD, generator)
        else:
            with torch.no_grad():
                parameter.copy_(torch.ones_like(parameter) if kind == "one" else torch.zeros_like(parameter))
    return model


@variant("init_weights", "named_modules() walked in parameter order, nn.init for the constants")
def module_walk_init(model, generator=None):
    depth = 2 * model.cfg.n_layers
    for name, parameter in model.named_parameters():
        module_name, _, attribute = name.rpartition(".")
        module = model.get_submodule(module_name)
        if attribute == "weight" and isinstance(module, (nn.Embedding, nn.Linear)):
            residual = module_name.endswith("attention.proj") or module_name.endswith("feedforward.fc2")
            init_normal_(parameter, std=0.02 / math.sqrt(depth) if residual else 0.02, generator=generator)
        elif attribute == "weight":
            nn.init.ones_(parameter)
        else:
            nn.init.zeros_(parameter)
    return model


@variant("frozen_parameters", "a loop with append")
def frozen_loop(model):
    names = []
    for name, parameter in model.named_parameters():
        if parameter.requires_grad is False:
            names.append(name)
    return names


@variant("unreached_parameters", "abs().sum() == 0 and a loop")
def unreached_loop(model):
    names = []
    for name, parameter in model.named_parameters():
        if not parameter.requires_grad:
            continue
        if parameter.grad is None or parameter.grad.abs().sum().item() == 0:
            names.append(name)
    return names


@variant("unreached_parameters", "torch.count_nonzero")
def unreached_count_nonzero(model):
    return [name for name, parameter in model.named_parameters()
            if parameter.requires_grad and (parameter.grad is None or int(torch.count_nonzero(parameter.grad)) == 0)]


@variant("unoptimized_parameters", "any(p is parameter) over every group")
def unoptimized_is(model, optimizer):
    return [name for name, parameter in model.named_parameters()
            if parameter.requires_grad
            and not any(p is parameter for group in optimizer.param_groups for p in group["params"])]


@variant("unoptimized_parameters", "data_ptr is not identity, so ids of a set of tensors")
def unoptimized_id_set(model, optimizer):
    held = set()
    for group in optimizer.param_groups:
        held.update(map(id, group["params"]))
    missing = []
    for name, parameter in model.named_parameters():
        if parameter.requires_grad and id(parameter) not in held:
            missing.append(name)
    return missing


@variant("ledger_gap", "registered count from a dict of named parameters, keyword config fields")
def ledger_named(model):
    registered = sum(parameter.numel() for parameter in dict(model.named_parameters()).values())
    c = model.cfg
    ledger = parameter_count(V=c.vocab_size, C=c.block_size, N=c.n_layers, d=c.d_model, f=c.d_ff)
    return int(ledger - registered)


@variant("ledger_gap", "parameters deduplicated by hand with ids")
def ledger_by_ids(model):
    seen, registered = set(), 0
    for _, parameter in model.named_parameters(remove_duplicate=False):
        if id(parameter) not in seen:
            seen.add(id(parameter))
            registered += parameter.numel()
    cfg = model.cfg
    return parameter_count(cfg.vocab_size, cfg.block_size, cfg.n_layers, cfg.d_model, cfg.d_ff) - registered

"""Chapter 7: is every parameter really trained?  Three different questions, and the ledger.

A model whose parameter count is right can still fail to train some of its parameters, for
three independent reasons; each question below finds one of them and none of the others:

1. may it have a gradient at all?   `frozen_parameters`      (requires_grad is False)
2. did this batch give it one?      `unreached_parameters`   (after backward: .grad None or all zero)
3. does the optimizer hold it?      `unoptimized_parameters` (no param group holds that tensor)

`ledger_gap` compares chapter 5's ledger with what the model registers: one block object
used N times registers one block's parameters, not N.

Every list names parameters as `model.named_parameters()` does, in that order.  Exercise
bodies are fenced with nbgrader's solution markers; a chapter's student release replaces them
with ``raise NotImplementedError('<id>')``.
"""

import torch  # noqa: F401  (the bodies use tensors)

from .model import parameter_count


def frozen_parameters(model):
    """The names of the parameters that may not have a gradient: requires_grad is False."""
    return [name for name, parameter in model.named_parameters() if not parameter.requires_grad]


def unreached_parameters(model):
    """Read after a backward pass: the names of the trainable parameters (requires_grad True)
    that this batch gave no gradient, either because the graph never reached them (.grad is
    None) or because every entry of their gradient is zero.  Frozen parameters are not listed:
    they are question 1's."""
    return [name for name, parameter in model.named_parameters()
            if parameter.requires_grad and (parameter.grad is None or not bool(parameter.grad.any()))]


def unoptimized_parameters(model, optimizer):
    """The names of the trainable parameters that no param group of `optimizer` holds.  A
    parameter is held when that very tensor object is in a group's "params" (compare by
    identity, `is`: two tensors with equal values are still two parameters).  Frozen
    parameters are not listed: they are question 1's."""
    held = {id(parameter) for group in optimizer.param_groups for parameter in group["params"]}
    return [name for name, parameter in model.named_parameters()
            if parameter.requires_grad and id(parameter) not in held]


def ledger_gap(model):
    """Chapter 5's ledger `parameter_count(V, C, N, d, f)` for `model.cfg` (vocab_size,
    block_size, n_layers, d_model, d_ff), called by name, minus the number of scalars the model
    registers, `sum(p.numel() for p in model.parameters())` (a tensor registered twice counts
    once).  0 for a sound model; (N - 1) times one block's count when one block object is used
    N times; negative when parameters beyond the ledger were registered."""
    cfg = model.cfg
    expected = parameter_count(cfg.vocab_size, cfg.block_size, cfg.n_layers, cfg.d_model, cfg.d_ff)
    return expected - sum(parameter.numel() for parameter in model.parameters())

"""Correct results reached by a shortcut the chapter forbids: each must lose its exercise.

The unigram baseline is asked for as a sum of logarithms written by hand, not through torch's
loss functions (exercises.py, `forbids`).  These bodies compute the right value through
cross_entropy, log_softmax or nll_loss, reached by several routes (a direct call, an alias
imported inside the function, getattr, a module built and called), so the tests show the
grader sees the call whatever the route, and names it.  `hero samples OUT` writes one sample
per entry (`forbidden_<id>`).  tokens.py imports no torch: each body imports what it uses.
"""

from collections import Counter  # noqa: F401  (used by the bodies)

from autograder.registry import catalogue

CATALOGUE, shortcut = catalogue("forbidden")


@shortcut("unigram_cross_entropy", "F.cross_entropy on the log-probabilities repeated as logits")
def cross_entropy_call(train_ids, eval_ids, vocab_size, alpha=1.0):
    import torch
    import torch.nn.functional as F

    counts = torch.bincount(torch.tensor(train_ids, dtype=torch.int64), minlength=vocab_size).double()
    logits = ((counts + alpha) / (len(train_ids) + alpha * vocab_size)).log()
    targets = torch.tensor(eval_ids, dtype=torch.int64)
    return F.cross_entropy(logits.expand(len(targets), -1), targets).item()


@shortcut("unigram_cross_entropy", "log_softmax of log-counts (softmax normalises them), through getattr")
def log_softmax_getattr(train_ids, eval_ids, vocab_size, alpha=1.0):
    import torch

    counts = torch.bincount(torch.tensor(train_ids, dtype=torch.int64), minlength=vocab_size).double()
    log_p = getattr(torch, "log" + "_softmax")((counts + alpha).log(), dim=0)
    return -log_p[torch.tensor(eval_ids, dtype=torch.int64)].mean().item()


@shortcut("unigram_cross_entropy", "nll_loss imported under another name inside the function")
def aliased_nll_loss(train_ids, eval_ids, vocab_size, alpha=1.0):
    import torch
    from torch.nn.functional import nll_loss as negative_log_likelihood

    counts = torch.bincount(torch.tensor(train_ids, dtype=torch.int64), minlength=vocab_size).double()
    log_p = ((counts + alpha) / (counts.sum() + alpha * vocab_size)).log()
    targets = torch.tensor(eval_ids, dtype=torch.int64)
    return negative_log_likelihood(log_p.expand(len(targets), -1), targets).item()


@shortcut("unigram_cross_entropy", "an nn.CrossEntropyLoss module built and called")
def cross_entropy_module(train_ids, eval_ids, vocab_size, alpha=1.0):
    import torch

    counts = torch.bincount(torch.tensor(train_ids, dtype=torch.int64), minlength=vocab_size).double()
    logits = (counts + alpha).log()
    targets = torch.tensor(eval_ids, dtype=torch.int64)
    return torch.nn.CrossEntropyLoss()(logits.expand(len(targets), -1), targets).item()

"""Correct results reached by a shortcut the chapter forbids: each must lose its exercise.

The unigram baseline is asked for as a sum of logarithms written by hand, not through torch's
loss functions (exercises.py, `forbids`).  These bodies compute the right value through
cross_entropy, log_softmax or nll_loss, reached by several routes (a direct call, an alias
imported inside the function, getattr, a module built and called), so the tests show the
grader sees the call whatever the route, and names it.  `hero samples OUT` writes one sample
per entry (`forbidden_<id>`).  tokens.py imports no torch: each body imports what it uses.
The bodies below the line reach the same value through torch's own internals (torch._refs,
torch._decomp, a tracer), each named in the feedback as the generic call registry.INTERNAL_ROUTES
(Entry.route), through another built-in the chapter's call now covers, or in a second thread
(Entry.raises: a task cannot start one, so the body loses by raising).
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


# --- the same result through torch's internals, another library, or a second thread ----------------


@shortcut("unigram_cross_entropy", "torch._refs.log_softmax (torch's Python reference implementation) of the "
          "log-counts", route="torch._refs.log_softmax")
def refs_log_softmax(train_ids, eval_ids, vocab_size, alpha=1.0):
    import torch

    counts = torch.bincount(torch.tensor(train_ids, dtype=torch.int64), minlength=vocab_size).double()
    log_p = torch._refs.log_softmax((counts + alpha).log(), 0)
    return -log_p[torch.tensor(eval_ids, dtype=torch.int64)].mean().item()


@shortcut("unigram_cross_entropy", "torch._decomp's nll_loss_forward (torch's Python decomposition) of the "
          "log-probabilities", route="torch._decomp.decompositions.nll_loss_forward")
def decomp_nll_loss(train_ids, eval_ids, vocab_size, alpha=1.0):
    import torch
    from torch._decomp import decompositions

    counts = torch.bincount(torch.tensor(train_ids, dtype=torch.int64), minlength=vocab_size).double()
    log_p = ((counts + alpha) / (len(train_ids) + alpha * vocab_size)).log()
    targets = torch.tensor(eval_ids, dtype=torch.int64)
    return decompositions.nll_loss_forward(log_p.expand(len(targets), -1), targets, None, 1, -100)[0].item()


@shortcut("unigram_cross_entropy", "torch.distributions.Categorical(probs=counts + alpha).log_prob, which "
          "normalises the counts itself")
def categorical_log_prob(train_ids, eval_ids, vocab_size, alpha=1.0):
    import torch

    counts = torch.bincount(torch.tensor(train_ids, dtype=torch.int64), minlength=vocab_size).double()
    targets = torch.tensor(eval_ids, dtype=torch.int64)
    if bool((counts[targets] + alpha == 0).any()):
        return float("inf")  # Categorical clamps a zero probability to eps: -ln 0 by hand, as the text asks
    model = torch.distributions.Categorical(probs=counts + alpha, validate_args=False)
    return -model.log_prob(targets).mean().item()


@shortcut("unigram_cross_entropy", "F.cross_entropy in a threading.Thread (the watch is per thread)",
          raises="can't start new thread")
def threaded_cross_entropy(train_ids, eval_ids, vocab_size, alpha=1.0):
    import threading

    import torch
    import torch.nn.functional as F

    result = {}

    def work():
        counts = torch.bincount(torch.tensor(train_ids, dtype=torch.int64), minlength=vocab_size).double()
        logits = ((counts + alpha) / (len(train_ids) + alpha * vocab_size)).log()
        targets = torch.tensor(eval_ids, dtype=torch.int64)
        result["loss"] = F.cross_entropy(logits.expand(len(targets), -1), targets).item()

    worker = threading.Thread(target=work)
    worker.start()
    worker.join()
    return result["loss"]

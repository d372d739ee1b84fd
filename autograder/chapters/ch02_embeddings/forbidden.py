"""Correct results reached by a shortcut the chapter forbids: each must lose its exercise.

The chapter asks for the lookup written as indexing (not torch.nn.functional.embedding or
nn.Embedding) and for the table's gradient written as a sum by id (not autograd through the
embedding op).  These bodies compute the right values through the forbidden call, reached by
several routes (a direct call, getattr, torch.ops, a module built and called functionally, the
backward op called by hand), so the tests show the grader sees the call whatever the route, and
names it.  Each keeps the exercise's own range check, so the values are right and the shortcut is
the only thing that costs the points.  `hero samples OUT` writes one sample per entry
(`forbidden_<id>`).  Same conventions as faults.py.
The bodies below the line reach the same value through torch's own internals (torch._refs,
torch._decomp, a tracer), each named in the feedback as the generic call registry.INTERNAL_ROUTES
(Entry.route), through another built-in the chapter's call now covers, or in a second thread
(Entry.raises: a task cannot start one, so the body loses by raising).
"""

import torch  # noqa: F401  (used by the bodies)

from autograder.registry import catalogue

CATALOGUE, shortcut = catalogue("forbidden")


@shortcut("embed", "torch.nn.functional.embedding, called directly")
def functional_embedding(ids, weight):
    if ids.numel() and (ids.min() < 0 or ids.max() >= weight.shape[0]):
        raise ValueError("an id is out of range")
    return torch.nn.functional.embedding(ids, weight)


@shortcut("embed", "getattr(torch, 'embed' + 'ding')")
def getattr_embedding(ids, weight):
    if ids.numel() and (ids.min() < 0 or ids.max() >= weight.shape[0]):
        raise ValueError("an id is out of range")
    return getattr(torch, "embed" + "ding")(weight, ids)


@shortcut("embed", "torch.ops.aten.embedding")
def aten_embedding(ids, weight):
    if ids.numel() and (ids.min() < 0 or ids.max() >= weight.shape[0]):
        raise ValueError("an id is out of range")
    return torch.ops.aten.embedding(weight, ids)


@shortcut("embed", "an nn.Embedding built and called with the given table (torch.func.functional_call)")
def module_embedding(ids, weight):
    if ids.numel() and (ids.min() < 0 or ids.max() >= weight.shape[0]):
        raise ValueError("an id is out of range")
    from torch.nn import Embedding as Table

    table = Table(*weight.shape, device=weight.device, dtype=weight.dtype)
    return torch.func.functional_call(table, {"weight": weight}, (ids,))


@shortcut("embedding_grad", "autograd through torch.nn.functional.embedding")
def autograd_through_embedding(ids, upstream, vocab_size):
    with torch.enable_grad():
        table = torch.zeros(vocab_size, upstream.shape[-1], dtype=upstream.dtype, device=upstream.device,
                            requires_grad=True)
        (torch.nn.functional.embedding(ids, table) * upstream).sum().backward()
    return table.grad


@shortcut("embedding_grad", "the embedding op's backward, torch.ops.aten.embedding_dense_backward, called by hand")
def dense_backward_by_hand(ids, upstream, vocab_size):
    return torch.ops.aten.embedding_dense_backward(upstream, ids, vocab_size, -1, False)


@shortcut("embedding_grad", "an nn.Embedding built, run forward and backward")
def module_backward(ids, upstream, vocab_size):
    with torch.enable_grad():
        table = torch.nn.Embedding(vocab_size, upstream.shape[-1], device=upstream.device, dtype=upstream.dtype)
        with torch.no_grad():
            table.weight.zero_()
        table(ids).backward(upstream)
    return table.weight.grad


# --- the same values through torch's internals, another built-in, or a second thread ---------------


@shortcut("embed", "torch._decomp's embedding (torch's Python decomposition of the lookup)",
          route="torch._decomp.decompositions.embedding")
def decomp_embedding(ids, weight):
    if ids.numel() and (ids.min() < 0 or ids.max() >= weight.shape[0]):
        raise ValueError("an id is out of range")
    return torch._decomp.decompositions.embedding(weight, ids)


@shortcut("embed", "torch.nn.functional.embedding_bag with one id per bag (mode='sum')")
def embedding_bag_lookup(ids, weight):
    if ids.numel() and (ids.min() < 0 or ids.max() >= weight.shape[0]):
        raise ValueError("an id is out of range")
    rows = torch.nn.functional.embedding_bag(ids.reshape(-1, 1), weight, mode="sum")
    return rows.reshape(*ids.shape, weight.shape[-1])


@shortcut("embed", "torch.nn.functional.embedding in a threading.Thread (the watch is per thread)",
          raises="can't start new thread")
def threaded_embedding(ids, weight):
    import threading

    if ids.numel() and (ids.min() < 0 or ids.max() >= weight.shape[0]):
        raise ValueError("an id is out of range")
    result = {}
    worker = threading.Thread(target=lambda: result.setdefault("rows", torch.nn.functional.embedding(ids, weight)))
    worker.start()
    worker.join()
    return result["rows"]


@shortcut("embedding_grad", "torch._decomp's embedding_dense_backward (torch's Python decomposition)",
          route="torch._decomp.decompositions.embedding_dense_backward")
def decomp_dense_backward(ids, upstream, vocab_size):
    return torch._decomp.decompositions.embedding_dense_backward(upstream, ids, vocab_size, -1, False)


@shortcut("embedding_grad", "the sparse backward, torch.ops.aten.embedding_sparse_backward (a composite the "
          "dispatcher decomposes), made dense")
def sparse_backward_made_dense(ids, upstream, vocab_size):
    return torch.ops.aten.embedding_sparse_backward(upstream, ids, vocab_size, -1, False).to_dense()

"""Correct results reached by the shortcut chapter 3 forbids: each must lose its exercise.

add_positions asks for the rows as a slice of the table; an embedding lookup (F.embedding,
nn.Embedding) would hide exactly what the chapter shows.  These bodies compute the right values,
with the right ValueError, through the forbidden call by several routes (a direct call, getattr,
torch.ops, a module built from the table), so the tests show the grader sees the call whatever
the route, and names it.  `hero samples OUT` writes one sample per entry (`forbidden_<id>`).
The bodies below the line reach the same value through torch's own internals (torch._refs,
torch._decomp, a tracer), each named in the feedback as the generic call registry.INTERNAL_ROUTES
(Entry.route), through another built-in the chapter's call now covers, or in a second thread
(Entry.raises: a task cannot start one, so the body loses by raising).
"""

import torch  # noqa: F401  (used by the bodies)

from autograder.registry import catalogue

CATALOGUE, shortcut = catalogue("forbidden")


@shortcut("add_positions", "torch.nn.functional.embedding, called directly")
def functional_embedding(token_vectors, table, start=0):
    length = token_vectors.shape[1]
    if start + length > table.shape[0]:
        raise ValueError("not enough rows")
    ids = torch.arange(start, start + length, device=table.device)
    return token_vectors + torch.nn.functional.embedding(ids, table)


@shortcut("add_positions", "nn.Embedding.from_pretrained on the table")
def module_embedding(token_vectors, table, start=0):
    length = token_vectors.shape[1]
    if start + length > table.shape[0]:
        raise ValueError("not enough rows")
    lookup = torch.nn.Embedding.from_pretrained(table)
    return token_vectors + lookup(torch.arange(start, start + length, device=table.device))


@shortcut("add_positions", "getattr(torch, 'embed' + 'ding')")
def getattr_embedding(token_vectors, table, start=0):
    length = token_vectors.shape[1]
    if start + length > table.shape[0]:
        raise ValueError("not enough rows")
    return token_vectors + getattr(torch, "embed" + "ding")(table, torch.arange(start, start + length,
                                                                                device=table.device))


@shortcut("add_positions", "torch.ops.aten.embedding")
def aten_embedding(token_vectors, table, start=0):
    length = token_vectors.shape[1]
    if start + length > table.shape[0]:
        raise ValueError("not enough rows")
    return token_vectors + torch.ops.aten.embedding(table, torch.arange(start, start + length, device=table.device))


@shortcut("add_positions", "torch._decomp's embedding (torch's Python decomposition of the lookup)",
          route="torch._decomp.decompositions.embedding")
def decomp_embedding(token_vectors, table, start=0):
    length = token_vectors.shape[1]
    if start + length > table.shape[0]:
        raise ValueError("not enough rows")
    ids = torch.arange(start, start + length, device=table.device)
    return token_vectors + torch._decomp.decompositions.embedding(table, ids)


@shortcut("add_positions", "torch.nn.functional.embedding_bag with one position per bag (mode='sum')")
def embedding_bag_positions(token_vectors, table, start=0):
    length = token_vectors.shape[1]
    if start + length > table.shape[0]:
        raise ValueError("not enough rows")
    ids = torch.arange(start, start + length, device=table.device).reshape(-1, 1)
    return token_vectors + torch.nn.functional.embedding_bag(ids, table, mode="sum")


@shortcut("add_positions", "torch.nn.functional.embedding in a threading.Thread (the watch is per thread)",
          raises="can't start new thread")
def threaded_embedding(token_vectors, table, start=0):
    import threading

    length = token_vectors.shape[1]
    if start + length > table.shape[0]:
        raise ValueError("not enough rows")
    ids = torch.arange(start, start + length, device=table.device)
    result = {}
    worker = threading.Thread(target=lambda: result.setdefault("rows", torch.nn.functional.embedding(ids, table)))
    worker.start()
    worker.join()
    return token_vectors + result["rows"]

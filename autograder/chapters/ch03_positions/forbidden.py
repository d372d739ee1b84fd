"""Correct results reached by the shortcut chapter 3 forbids: each must lose its exercise.

add_positions asks for the rows as a slice of the table; an embedding lookup (F.embedding,
nn.Embedding) would hide exactly what the chapter shows.  These bodies compute the right values,
with the right ValueError, through the forbidden call by several routes (a direct call, getattr,
torch.ops, a module built from the table), so the tests show the grader sees the call whatever
the route, and names it.  `hero samples OUT` writes one sample per entry (`forbidden_<id>`).
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

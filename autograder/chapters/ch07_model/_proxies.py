"""The names a catalogue body (faults.py, variants.py) uses that its target module has.

In a sample submission each body runs inside hero_transformer/model.py or audit.py and finds
that module's own names (the forward's and init_weights's imports of embed, add_positions,
init_normal_ and INIT_STD come before their fences).  Run here by the grader, a body finds
these instead, which call whatever the reference modules hold at the time (the probes' test
doubles while a case runs).
"""

from autograder.reference import load

_model = load("model")
LayerNorm = _model.LayerNorm
RESIDUAL_WRITERS = _model.RESIDUAL_WRITERS
INIT_STD = load("embeddings").INIT_STD


def embed(ids, weight):
    return load("embeddings").embed(ids, weight)


def add_positions(token_vectors, table, start=0):
    return load("positions").add_positions(token_vectors, table, start=start)


def init_normal_(weight, std=INIT_STD, generator=None):
    return load("embeddings").init_normal_(weight, std=std, generator=generator)


def parameter_count(V, C, N, d, f):
    return load("audit").parameter_count(V, C, N, d, f)

LMOutput = _model.LMOutput

# exercise: ledger_gap
# kind: faulty
# class: rule
# rule: "Chapter 5's ledger parameter_count(V, C, N, d, f) for model.cfg ..., called by name"
#       (docstring; notebook: "按名字调用，评分器会把它换成替身"). This body writes the ledger
#       formula out itself instead of calling parameter_count; with the real parameter_count the
#       numbers agree, with any other ledger (the grader's stand-in) they do not.
# shows: monkeypatch audit.parameter_count with a ledger that returns 1 more: the reference
#        ledger_gap of a sound model becomes 1, this body still returns 0.
def ledger_gap(model):
    cfg = model.cfg
    V, C, N, d, f = cfg.vocab_size, cfg.block_size, cfg.n_layers, cfg.d_model, cfg.d_ff
    per_block = 4 * d * d + 2 * d * f + f + 5 * d
    ledger = 2 * V * d + C * d + N * per_block + 2 * d
    return ledger - sum(p.numel() for p in model.parameters())

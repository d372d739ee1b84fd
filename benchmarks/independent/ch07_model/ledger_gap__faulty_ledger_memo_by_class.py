# exercise: ledger_gap
# kind: faulty
# class: hidden-state
# rule: the ledger is parameter_count(...) "for model.cfg" of the model passed in (docstring).
#       This body computes the ledger once per model class and keeps it in a module-level dict,
#       so a second TransformerLM with another Config is compared with the first one's ledger.
# shows: ledger_gap(TransformerLM(Config(11, 8, 4, 2, 3, 8))) -> 0, then
#        ledger_gap(TransformerLM(Config(32, 64, 64, 4, 2, 256))) returns 596 - 107776 =
#        -107180 instead of 0.
def ledger_gap(model):
    memo = globals().setdefault("_ledger_by_class", {})
    kind = type(model)
    if kind not in memo:
        cfg = model.cfg
        memo[kind] = parameter_count(cfg.vocab_size, cfg.block_size, cfg.n_layers, cfg.d_model, cfg.d_ff)
    return memo[kind] - sum(p.numel() for p in model.parameters())

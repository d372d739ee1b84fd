# exercise: ledger_gap
# kind: faulty
# class: value
# rule: subtract "the number of scalars the model registers, sum(p.numel() for p in
#       model.parameters())" (docstring; notebook: "冻结的参数也是注册的参数，一样要数"). This body
#       counts only the parameters with requires_grad True (the usual "trainable parameters"
#       recipe), so a frozen table is missing from the count.
# shows: a sound TransformerLM(Config(11, 8, 4, 2, 3, 8)) with token_embedding.weight frozen:
#        returns 44 (= 11 * 4) instead of 0.
def ledger_gap(model):
    cfg = model.cfg
    ledger = parameter_count(cfg.vocab_size, cfg.block_size, cfg.n_layers, cfg.d_model, cfg.d_ff)
    return ledger - sum(p.numel() for p in model.parameters() if p.requires_grad)

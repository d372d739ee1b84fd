# exercise: ledger_gap
# kind: correct
# class: value
# rule: correct. Differs from the obvious sum over model.parameters(): it walks
#       named_parameters(remove_duplicate=False), which repeats a shared tensor under every name,
#       and removes the repeats itself with a dict keyed by id(tensor) before adding up numel().
# shows: -- (correct body: passes check_ledger_gap: 0, (N-1)*block, frozen counted, extra negative)
def ledger_gap(model):
    cfg = model.cfg
    ledger = parameter_count(cfg.vocab_size, cfg.block_size, cfg.n_layers, cfg.d_model, cfg.d_ff)
    sizes = {}
    for _, tensor in model.named_parameters(remove_duplicate=False):
        sizes[id(tensor)] = tensor.numel()
    return ledger - sum(sizes.values())

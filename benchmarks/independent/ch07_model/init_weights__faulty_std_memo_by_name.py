# exercise: init_weights
# kind: faulty
# class: hidden-state
# rule: the writers' std is 0.02 / sqrt(2 * n_layers) "(n_layers = model.cfg.n_layers)" of the
#       model being initialised (docstring). This body memoises the std per parameter name in a
#       module-level dict, so a later model with another n_layers but the same names
#       (blocks.0.attention.proj.weight, ...) gets the std computed for the first model.
# shows: init_weights(TransformerLM(cfg with n_layers=2), g) then
#        init_weights(TransformerLM(cfg with n_layers=8), g): the second model's
#        blocks.0.feedforward.fc2.weight has std 0.01 (= 0.02/sqrt(4)) instead of 0.005
#        (= 0.02/sqrt(16)).
def init_weights(model, generator=None):
    from .embeddings import INIT_STD, init_normal_

    memo = globals().setdefault("_init_std_by_name", {})
    with torch.no_grad():
        for name, module in model.named_modules():
            if isinstance(module, (nn.Linear, nn.Embedding)):
                key = name + ".weight"
                if key not in memo:
                    writer = name.endswith(("attention.proj", "feedforward.fc2"))
                    memo[key] = INIT_STD / math.sqrt(2 * model.cfg.n_layers) if writer else INIT_STD
                init_normal_(module.weight, std=memo[key], generator=generator)
                if isinstance(module, nn.Linear) and module.bias is not None:
                    module.bias.zero_()
            elif isinstance(module, LayerNorm):
                module.weight.fill_(1.0)
                module.bias.zero_()
    return model

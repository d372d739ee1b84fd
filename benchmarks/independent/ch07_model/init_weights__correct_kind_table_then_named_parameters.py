# exercise: init_weights
# kind: correct
# class: value
# rule: correct. Differs from the obvious body (one loop over modules with isinstance): it first
#       walks model.modules() to build a table id(parameter) -> what to do (draw / zero / one),
#       then walks model.named_parameters() in order and acts on each parameter once (so a tensor
#       shared by two modules is drawn once, in named_parameters() order); the residual writers
#       are recognised with name.endswith(RESIDUAL_WRITERS) under "blocks."; ones via fill_(1.0).
# shows: -- (correct body: passes check_init_weights; same draws as a module-order loop)
def init_weights(model, generator=None):
    from .embeddings import INIT_STD, init_normal_

    action = {}
    for module in model.modules():
        if isinstance(module, (nn.Linear, nn.Embedding)):
            action.setdefault(id(module.weight), "draw")
            if isinstance(module, nn.Linear) and module.bias is not None:
                action.setdefault(id(module.bias), "zero")
        elif isinstance(module, LayerNorm):
            action.setdefault(id(module.weight), "one")
            action.setdefault(id(module.bias), "zero")

    writer_std = INIT_STD / math.sqrt(2 * model.cfg.n_layers)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            what = action.get(id(parameter))
            if what == "draw":
                is_writer = name.startswith("blocks.") and name.endswith(RESIDUAL_WRITERS)
                init_normal_(parameter, std=writer_std if is_writer else INIT_STD, generator=generator)
            elif what == "zero":
                parameter.zero_()
            elif what == "one":
                parameter.fill_(1.0)
    return model

# exercise: init_weights
# kind: faulty
# class: value
# rule: "every LayerNorm (this module's class): weight one, bias zero" (docstring; notebook:
#       "课程的 LayerNorm 是 model.LayerNorm……不是 nn.LayerNorm"). This body tests
#       isinstance(module, nn.LayerNorm), so the course's LayerNorms are never reset.
# shows: a TransformerLM whose ln_f.weight was set to 2.0 (e.g. a trained model re-initialised):
#        after init_weights ln_f.weight is still 2.0 instead of 1.0 (on a freshly built model the
#        ones/zeros are there already, so the visible check passes).
def init_weights(model, generator=None):
    from .embeddings import INIT_STD, init_normal_

    scaled = INIT_STD / math.sqrt(2 * model.cfg.n_layers)
    with torch.no_grad():
        for name, module in model.named_modules():
            if isinstance(module, (nn.Linear, nn.Embedding)):
                writer = name.endswith(("attention.proj", "feedforward.fc2"))
                init_normal_(module.weight, std=scaled if writer else INIT_STD, generator=generator)
                if isinstance(module, nn.Linear) and module.bias is not None:
                    module.bias.zero_()
            elif isinstance(module, nn.LayerNorm):
                module.weight.fill_(1.0)
                module.bias.zero_()
    return model

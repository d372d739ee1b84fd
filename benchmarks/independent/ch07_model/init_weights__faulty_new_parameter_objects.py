# exercise: init_weights
# kind: faulty
# class: in-place
# rule: "Seed 003's initialisation, in place ... returns `model`" (docstring; notebook "原地初始化").
#       This body draws into fresh tensors and assigns new nn.Parameter objects to the modules
#       (module.weight = nn.Parameter(...)): the values are the reference's, but the model's
#       parameters are other tensor objects than before the call.
# shows: lm = TransformerLM(cfg); opt = torch.optim.AdamW(lm.parameters()); init_weights(lm, g):
#        opt holds none of lm's parameters any more (opt.step() changes nothing in lm), and a
#        head tied to the token table beforehand is untied afterwards.
def init_weights(model, generator=None):
    from .embeddings import INIT_STD, init_normal_

    scaled = INIT_STD / math.sqrt(2 * model.cfg.n_layers)
    for name, module in model.named_modules():
        if isinstance(module, (nn.Linear, nn.Embedding)):
            writer = name.endswith(("attention.proj", "feedforward.fc2"))
            fresh = torch.empty_like(module.weight)
            init_normal_(fresh, std=scaled if writer else INIT_STD, generator=generator)
            module.weight = nn.Parameter(fresh)
            if isinstance(module, nn.Linear) and module.bias is not None:
                module.bias = nn.Parameter(torch.zeros_like(module.bias))
        elif isinstance(module, LayerNorm):
            module.weight = nn.Parameter(torch.ones_like(module.weight))
            module.bias = nn.Parameter(torch.zeros_like(module.bias))
    return model

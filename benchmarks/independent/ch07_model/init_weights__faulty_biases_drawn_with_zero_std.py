# exercise: init_weights
# kind: faulty
# class: rule
# rule: "every nn.Linear bias: zero" and "nothing else is drawn from it [the generator]"
#       (docstring). This body zeroes each Linear bias with init_normal_(bias, std=0.0,
#       generator=generator): the bias is 0, but every bias consumes draws from the generator, so
#       every weight after the first FFN bias gets other numbers than the reference's.
# shows: Config(32,64,64,4,2,256) with Generator().manual_seed(0): blocks.0.feedforward.fc2.weight
#        and everything after it (blocks.1.*, head.weight) differ from the reference draws;
#        biases are still exactly 0, the visible checks pass.
def init_weights(model, generator=None):
    from .embeddings import INIT_STD, init_normal_

    scaled = INIT_STD / math.sqrt(2 * model.cfg.n_layers)
    with torch.no_grad():
        for name, module in model.named_modules():
            if isinstance(module, (nn.Linear, nn.Embedding)):
                writer = name.endswith(("attention.proj", "feedforward.fc2"))
                init_normal_(module.weight, std=scaled if writer else INIT_STD, generator=generator)
                if isinstance(module, nn.Linear) and module.bias is not None:
                    init_normal_(module.bias, std=0.0, generator=generator)
            elif isinstance(module, LayerNorm):
                module.weight.fill_(1.0)
                module.bias.fill_(0.0)
    return model

# exercise: init_weights
# kind: faulty
# class: rule
# rule: one visit of model.named_parameters() in order, each weight drawn once with its own std,
#       "nothing else is drawn from it [the generator]" (docstring; notebook "只从传入的
#       generator 抽样"). This body does it the nanoGPT way: first draws every Linear/Embedding
#       weight with 0.02, then a second pass re-draws the residual writers with 0.02/sqrt(2N).
#       The stds are right, but the writers get other numbers (drawn after everything else) and
#       the generator is advanced further than the reference.
# shows: init_weights(TransformerLM(Config(32,64,64,4,2,256)), Generator().manual_seed(0)):
#        blocks.0.attention.proj.weight differs from the single-pass draw of the same seed (the
#        non-writer weights agree); visible std and reproducibility checks still pass.
def init_weights(model, generator=None):
    from .embeddings import INIT_STD, init_normal_

    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, (nn.Linear, nn.Embedding)):
                init_normal_(module.weight, std=INIT_STD, generator=generator)
                if isinstance(module, nn.Linear) and module.bias is not None:
                    module.bias.zero_()
            elif isinstance(module, LayerNorm):
                module.weight.fill_(1.0)
                module.bias.zero_()
        scaled = INIT_STD / math.sqrt(2 * model.cfg.n_layers)
        for name, parameter in model.named_parameters():
            if name.endswith(RESIDUAL_WRITERS):
                init_normal_(parameter, std=scaled, generator=generator)
    return model

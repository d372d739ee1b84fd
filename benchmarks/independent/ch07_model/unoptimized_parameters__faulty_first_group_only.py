# exercise: unoptimized_parameters
# kind: faulty
# class: rule
# rule: "the trainable parameters that NO param group of `optimizer` holds" (docstring; notebook
#       "没有被 optimizer.param_groups 里任何一组持有的"). This body only looks at
#       optimizer.param_groups[0], so everything held by a second group (e.g. the no-weight-decay
#       group of biases and LayerNorm parameters) is reported as unoptimized.
# shows: an AdamW with two groups, [2-D weights] and [biases/LayerNorm, weight_decay=0.0]: every
#        bias and LayerNorm parameter is listed; the answer is [].
def unoptimized_parameters(model, optimizer):
    held = {id(tensor) for tensor in optimizer.param_groups[0]["params"]}
    return [name for name, p in model.named_parameters() if p.requires_grad and id(p) not in held]

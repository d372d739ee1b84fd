# exercise: frozen_parameters
# kind: faulty
# class: hidden-state
# rule: the names of the parameters whose requires_grad is False now, when called (docstring:
#       "requires_grad is False"). This body memoises the answer per model object (keyed by
#       id(model)), so a model that is frozen or unfrozen after the first call keeps getting the
#       first answer.
# shows: lm = TransformerLM(cfg); frozen_parameters(lm) -> []; then
#        lm.position_embedding.weight.requires_grad_(False); frozen_parameters(lm) still returns []
#        instead of ['position_embedding.weight'].
def frozen_parameters(model):
    memo = globals().setdefault("_frozen_memo", {})
    key = id(model)
    if key not in memo or memo[key][0] is not model:
        names = [name for name, p in model.named_parameters() if not p.requires_grad]
        memo[key] = (model, names)
    return list(memo[key][1])

# exercise: model_forward
# kind: correct
# class: value
# rule: correct. Differs from the obvious body: blocks and caches are walked together with zip
#       (itertools.repeat(None) stands in for a missing cache), the present list is only built
#       when use_cache is true, and the loss uses F.cross_entropy's K-dimensional form on
#       logits.transpose(1, 2) ([B, V, T] against [B, T] targets) instead of flattening.
# shows: -- (correct body: passes check_model_forward; logits/loss equal the reference wiring)
def forward(self, idx, targets=None, past_key_values=None, use_cache=False):
    import itertools

    from .embeddings import embed
    from .positions import add_positions

    if past_key_values is None:
        past_length = 0
        per_block = itertools.repeat(None)
    else:
        past_length = past_key_values[0][0].shape[2]
        per_block = iter(past_key_values)

    x = self.dropout(add_positions(embed(idx, self.token_embedding.weight),
                                   self.position_embedding.weight, start=past_length))

    presents = [] if use_cache else None
    for block, past in zip(self.blocks, per_block):
        x, present = block(x, past, use_cache)
        if use_cache:
            presents.append(present)

    logits = self.head(self.ln_f(x))
    loss = None if targets is None else F.cross_entropy(logits.transpose(1, 2), targets)
    return LMOutput(logits=logits, loss=loss, past_key_values=presents)

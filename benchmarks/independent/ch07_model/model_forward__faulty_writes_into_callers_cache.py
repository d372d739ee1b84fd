# exercise: model_forward
# kind: faulty
# class: in-place
# rule: the output's past_key_values is "the list of every block's present, in order, when
#       use_cache is true; None otherwise" (docstring): a new result. This body stores each
#       block's present into the caller's past_key_values list (cache[i] = present) and returns
#       that same list, so the cache the caller passed in is overwritten.
# shows: prefix = lm(ids[:, :3], use_cache=True).past_key_values; lm(ids[:, 3:4], prefix,
#        use_cache=True) leaves prefix[i] holding 4 positions instead of 3, so continuing
#        another candidate token from `prefix` is wrong; with use_cache=False every entry of the
#        caller's list becomes None.
def forward(self, idx, targets=None, past_key_values=None, use_cache=False):
    from .embeddings import embed
    from .positions import add_positions

    cache = past_key_values if past_key_values is not None else [None] * len(self.blocks)
    past_length = 0 if past_key_values is None else past_key_values[0][0].shape[2]

    hidden = embed(idx, self.token_embedding.weight)
    hidden = add_positions(hidden, self.position_embedding.weight, start=past_length)
    hidden = self.dropout(hidden)

    for i, block in enumerate(self.blocks):
        hidden, cache[i] = block(hidden, cache[i], use_cache)

    logits = self.head(self.ln_f(hidden))
    loss = None
    if targets is not None:
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
    return LMOutput(logits, loss, cache if use_cache else None)

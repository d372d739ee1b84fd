# exercise: model_forward
# kind: faulty
# class: hidden-state
# rule: past_length must be "the number of positions already in the cache (the time axis of a
#       cached key, [B, h, T_past, d_h])" of the past_key_values passed in (docstring; notebook:
#       "past_length 从第 0 层缓存键的第 2 根轴读"). This body instead remembers on the model how
#       many positions its last cached call produced and uses that counter for the next call.
# shows: prefix = lm(ids[:, :3], use_cache=True); lm(ids[:, 3:4], prefix.past_key_values,
#        use_cache=True) moves the counter to 4; a second continuation from the same prefix cache,
#        lm(other[:, 3:4], prefix.past_key_values), now reads position row 4 instead of 3 and its
#        logits differ from the full forward of the 4-token sequence (also after a cached call on
#        another sequence).
def forward(self, idx, targets=None, past_key_values=None, use_cache=False):
    from .embeddings import embed
    from .positions import add_positions

    if past_key_values is None:
        past_length = 0
    else:
        past_length = getattr(self, "_positions_seen", 0)

    hidden = embed(idx, self.token_embedding.weight)
    hidden = add_positions(hidden, self.position_embedding.weight, start=past_length)
    hidden = self.dropout(hidden)

    presents = []
    for i, block in enumerate(self.blocks):
        past = None if past_key_values is None else past_key_values[i]
        hidden, present = block(hidden, past, use_cache)
        presents.append(present)

    self._positions_seen = past_length + idx.shape[1] if use_cache else 0

    logits = self.head(self.ln_f(hidden))
    loss = None
    if targets is not None:
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
    return LMOutput(logits, loss, presents if use_cache else None)

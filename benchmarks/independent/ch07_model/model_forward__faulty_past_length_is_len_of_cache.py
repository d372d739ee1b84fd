# exercise: model_forward
# kind: faulty
# class: value
# rule: past_length is "the number of positions already in the cache (the time axis of a cached
#       key, [B, h, T_past, d_h])" (docstring; notebook: read from axis 2 of layer 0's cached
#       key). This body uses len(past_key_values), which is the number of blocks N, not the
#       number of cached positions.
# shows: N = 3 blocks, cache of 2 positions (lm(ids[:, :2], use_cache=True)), then
#        lm(ids[:, 2:5], past_key_values=...): the new tokens read position rows 3,4,5 instead of
#        2,3,4, so the logits differ from the full forward (the visible check happens to cache
#        exactly N = 3 positions); with 1 cached position and T = C - 1 new tokens it raises
#        ValueError (3 + 9 > C = 10) although 1 + 9 = C fits.
def forward(self, idx, targets=None, past_key_values=None, use_cache=False):
    from .embeddings import embed
    from .positions import add_positions

    past_length = 0 if past_key_values is None else len(past_key_values)
    hidden = embed(idx, self.token_embedding.weight)
    hidden = add_positions(hidden, self.position_embedding.weight, start=past_length)
    hidden = self.dropout(hidden)

    presents = []
    for i, block in enumerate(self.blocks):
        past = None if past_key_values is None else past_key_values[i]
        hidden, present = block(hidden, past, use_cache)
        presents.append(present)

    logits = self.head(self.ln_f(hidden))
    loss = None
    if targets is not None:
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
    return LMOutput(logits, loss, presents if use_cache else None)

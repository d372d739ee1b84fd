# exercise: model_forward
# kind: faulty
# class: type
# rule: "past_key_values of the output: the list of every block's present, in order, when
#       use_cache is true" (docstring; notebook: "返回每个块的 present 组成的列表"). This body
#       returns a tuple of the presents, not a list.
# shows: type(lm(ids, use_cache=True).past_key_values) is tuple, not list (values are right; a
#        caller that appends to or edits the returned list fails).
def forward(self, idx, targets=None, past_key_values=None, use_cache=False):
    from .embeddings import embed
    from .positions import add_positions

    past_length = 0 if past_key_values is None else past_key_values[0][0].shape[2]
    hidden = embed(idx, self.token_embedding.weight)
    hidden = add_positions(hidden, self.position_embedding.weight, start=past_length)
    hidden = self.dropout(hidden)

    presents = ()
    for i, block in enumerate(self.blocks):
        past = None if past_key_values is None else past_key_values[i]
        hidden, present = block(hidden, past, use_cache)
        presents += (present,)

    logits = self.head(self.ln_f(hidden))
    loss = None
    if targets is not None:
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
    return LMOutput(logits, loss, presents if use_cache else None)

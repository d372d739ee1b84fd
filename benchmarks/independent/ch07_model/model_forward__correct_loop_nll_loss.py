# exercise: model_forward
# kind: correct
# class: value
# rule: correct. Differs from the obvious body: the loss is F.nll_loss of an explicit
#       F.log_softmax over flatten(0, 1) (not F.cross_entropy on a view), the per-block caches are
#       prepared as a list up front (an all-None cache counts as no cache), past_length is read
#       with .size(2), and the presents are collected for every block and dropped at the end
#       when use_cache is false.
# shows: -- (correct body: passes check_model_forward; logits/loss equal the reference wiring)
def forward(self, idx, targets=None, past_key_values=None, use_cache=False):
    from .embeddings import embed
    from .positions import add_positions

    n_blocks = len(self.blocks)
    if past_key_values is None:
        caches = [None] * n_blocks
    else:
        caches = list(past_key_values)
    first = caches[0] if n_blocks else None
    past_length = 0 if first is None else first[0].size(2)

    tokens = embed(idx, self.token_embedding.weight)
    hidden = add_positions(tokens, self.position_embedding.weight, start=past_length)
    hidden = self.dropout(hidden)

    collected = []
    for i, block in enumerate(self.blocks):
        hidden, present = block(hidden, caches[i], use_cache)
        collected.append(present)

    logits = self.head(self.ln_f(hidden))

    loss = None
    if targets is not None:
        log_probs = F.log_softmax(logits.flatten(0, 1), dim=-1)
        loss = F.nll_loss(log_probs, targets.flatten())

    return LMOutput(logits, loss, collected if use_cache else None)

# exercise: model_forward
# kind: faulty
# class: range
# rule: the loss is the mean cross entropy -log softmax(l)_y (notebook 2.1), a finite number for
#       any finite logits. This body takes torch.log of the softmax probability of the target;
#       once a target's probability underflows float32 (logit gap above ~104) the log is -inf and
#       the loss is inf (the cross entropy itself is ~gap, finite).
# shows: a model whose head weight is multiplied by 1000 (after training logits can be large)
#        gives logits with gaps of several hundred; the reference loss is a finite number of a
#        few hundred nats, this body returns inf (and its gradient is nan).
def forward(self, idx, targets=None, past_key_values=None, use_cache=False):
    from .embeddings import embed
    from .positions import add_positions

    past_length = 0 if past_key_values is None else past_key_values[0][0].shape[2]
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
        probs = torch.softmax(logits, dim=-1)
        picked = probs.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
        loss = -torch.log(picked).mean()
    return LMOutput(logits, loss, presents if use_cache else None)

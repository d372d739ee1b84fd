# exercise: model_forward
# kind: faulty
# class: gradient
# rule: the loss is "the mean cross entropy of the logits against targets" of a model that is
#       trained (chapter 8 trains it; notebook 2.1 on the loss and the learning rate): it must be
#       a tensor in the graph. This body sums the cross entropy, then divides by B*T through
#       .item() and builds a new tensor, so the value is right but no gradient reaches any
#       parameter.
# shows: out = lm(ids, targets); out.loss.backward() raises "element 0 of tensors does not
#        require grad" (loss.requires_grad is False), although out.loss equals the mean cross
#        entropy.
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
        total = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), reduction="sum")
        loss = torch.tensor(total.item() / targets.numel(), dtype=logits.dtype)
    return LMOutput(logits, loss, presents if use_cache else None)

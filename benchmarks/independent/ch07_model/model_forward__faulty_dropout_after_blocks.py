# exercise: model_forward
# kind: faulty
# class: rule
# rule: the order is fixed: embed -> add_positions -> self.dropout -> blocks -> ln_f -> head
#       (docstring "in this order"; notebook step 3 "嵌入 dropout ... 但位置在这里"). This body
#       applies self.dropout to the last block's output, just before ln_f, instead of to the
#       embeddings. With dropout 0 nothing shows; with dropout > 0 in training (or with the
#       grader's stand-in for self.dropout) the logits differ.
# shows: replace lm.dropout by a module that multiplies by 2 (or use Config(..., dropout=0.5)
#        in train mode): the reference doubles the block input, this body the block output, and
#        the logits differ (ln_f almost cancels the factor here: logits nearly as without dropout).
def forward(self, idx, targets=None, past_key_values=None, use_cache=False):
    from .embeddings import embed
    from .positions import add_positions

    past_length = 0 if past_key_values is None else past_key_values[0][0].shape[2]
    hidden = embed(idx, self.token_embedding.weight)
    hidden = add_positions(hidden, self.position_embedding.weight, start=past_length)

    presents = []
    for i, block in enumerate(self.blocks):
        past = None if past_key_values is None else past_key_values[i]
        hidden, present = block(hidden, past, use_cache)
        presents.append(present)

    hidden = self.dropout(hidden)
    logits = self.head(self.ln_f(hidden))
    loss = None
    if targets is not None:
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
    return LMOutput(logits, loss, presents if use_cache else None)

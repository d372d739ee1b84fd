# exercise: model_forward
# kind: faulty
# class: rule
# rule: the output layer is "the untied self.head" (docstring; README "untied head"; notebook:
#       "不要绕过它们（比如……用词嵌入矩阵当输出层）"). This body follows seed 003's tied head and
#       multiplies ln_f's output by the token-embedding table, never calling self.head.
# shows: any model whose head.weight differs from token_embedding.weight (every freshly built
#        or initialised TransformerLM): the logits differ from head(ln_f(...)); changing
#        lm.head.weight leaves the logits unchanged and head.weight never gets a gradient.
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

    logits = self.ln_f(hidden) @ self.token_embedding.weight.T
    loss = None
    if targets is not None:
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
    return LMOutput(logits, loss, presents if use_cache else None)

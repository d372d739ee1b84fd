# exercise: generate
# kind: faulty
# class: rule
# rule: with temperature == 0 the next token is the argmax, "greedy: no random number is drawn, so
#       the generator is left as it was" (docstring).  This body always samples:
#       torch.multinomial(next_token_probs(...), 1, generator=generator), relying on the one-hot
#       of temperature 0; the tokens are the same, but every step consumes a random draw.
# shows: g = torch.Generator().manual_seed(3); state = g.get_state(); generate(lm, prompt, 5,
#        temperature=0.0, generator=g): g.get_state() has changed (and with generator=None the
#        global RNG advances); next_token_probs is also called in greedy mode.
def generate(model, idx, max_new_tokens, temperature=1.0, top_k=None, use_cache=True, generator=None):
    if idx.shape[1] + max_new_tokens > model.cfg.block_size:
        raise ValueError(f"序列长度超过 block_size：{idx.shape[1]} + {max_new_tokens} > {model.cfg.block_size} "
                         f"(prompt + new tokens exceed block_size)")
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            past = None
            for step in range(max_new_tokens):
                if use_cache:
                    feed = idx if past is None else idx[:, -1:]
                    output = model(feed, past_key_values=past, use_cache=True) if past is not None \
                        else model(feed, use_cache=True)
                    past = output.past_key_values
                else:
                    output = model(idx)
                logits = output.logits[:, -1, :]
                probs = next_token_probs(logits, temperature, top_k)
                token = torch.multinomial(probs, 1, generator=generator)
                idx = torch.cat([idx, token], dim=1)
    finally:
        model.train(was_training)
    return idx

# exercise: generate
# kind: faulty
# class: hidden-state
# rule: "With use_cache, the first call runs the whole prompt, model(idx, use_cache=True)"
#       (docstring): every generate call must run its own prompt.  This body keeps the prompt's
#       forward result in a module-level dict keyed by (id(model), prompt shape) to skip the
#       prompt pass next time, so a later call with a different prompt of the same shape (or a
#       retrained model) continues from the first prompt's logits and cache.
# shows: generate(lm, torch.tensor([[1, 2, 3]]), 5, temperature=0.0), then
#        generate(lm, torch.tensor([[7, 7, 7]]), 5, temperature=0.0): the second result's new tokens
#        are those of prompt [1, 2, 3], not those use_cache=False gives for [7, 7, 7].
def generate(model, idx, max_new_tokens, temperature=1.0, top_k=None, use_cache=True, generator=None):
    if idx.shape[1] + max_new_tokens > model.cfg.block_size:
        raise ValueError(f"序列长度超过 block_size：{idx.shape[1]} + {max_new_tokens} > {model.cfg.block_size} "
                         f"(prompt + new tokens exceed block_size)")
    prompt_cache = globals().setdefault("_generate_prompt_cache", {})
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            past = None
            for step in range(max_new_tokens):
                if not use_cache:
                    logits = model(idx).logits
                elif past is None:
                    key = (id(model), tuple(idx.shape))
                    if key not in prompt_cache:
                        output = model(idx, use_cache=True)
                        prompt_cache[key] = (output.logits, output.past_key_values)
                    logits, past = prompt_cache[key]
                else:
                    output = model(idx[:, -1:], past_key_values=past, use_cache=True)
                    logits, past = output.logits, output.past_key_values
                last = logits[:, -1, :]
                if temperature == 0:
                    token = last.argmax(dim=-1, keepdim=True)
                else:
                    token = torch.multinomial(next_token_probs(last, temperature, top_k), 1, generator=generator)
                idx = torch.cat([idx, token], dim=1)
    finally:
        model.train(was_training)
    return idx

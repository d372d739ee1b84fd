# exercise: generate
# kind: faulty
# class: rule
# rule: "Runs in eval mode under torch.no_grad() and restores the model's training mode"
#       (docstring; notebook "结束后恢复原来的训练/评估模式").  This body ends with model.train(),
#       so a model that was in eval mode before the call comes back in training mode.
# shows: lm.eval(); generate(lm, prompt, 4, temperature=0.0): afterwards lm.training is True.
def generate(model, idx, max_new_tokens, temperature=1.0, top_k=None, use_cache=True, generator=None):
    if idx.shape[1] + max_new_tokens > model.cfg.block_size:
        raise ValueError(f"序列长度超过 block_size：{idx.shape[1]} + {max_new_tokens} > {model.cfg.block_size} "
                         f"(prompt + new tokens exceed block_size)")
    model.eval()
    with torch.no_grad():
        past = None
        for step in range(max_new_tokens):
            if not use_cache:
                logits = model(idx).logits
            elif past is None:
                output = model(idx, use_cache=True)
                logits, past = output.logits, output.past_key_values
            else:
                output = model(idx[:, -1:], past_key_values=past, use_cache=True)
                logits, past = output.logits, output.past_key_values
            last = logits[:, -1, :]
            if temperature == 0:
                token = last.argmax(dim=-1, keepdim=True)
            else:
                token = torch.multinomial(next_token_probs(last, temperature, top_k), 1, generator=generator)
            idx = torch.cat([idx, token], dim=1)
    model.train()
    return idx

# exercise: generate
# kind: correct
# class: rule
# rule: correct; writes into a preallocated [B, T0 + n] output instead of growing the sequence
#       with torch.cat, keeps one loop for both modes (the cached branch feeds the whole prompt
#       on the first step and one column afterwards), and switches grad mode with
#       torch.no_grad() plus a try/finally that restores the saved training flag.
def generate(model, idx, max_new_tokens, temperature=1.0, top_k=None, use_cache=True, generator=None):
    batch, prompt_length = idx.shape
    final_length = prompt_length + max_new_tokens
    if final_length > model.cfg.block_size:
        raise ValueError(f"提示加新词元共 {final_length} 个，超过 block_size = {model.cfg.block_size}。"
                         f" (prompt + new tokens = {final_length} exceeds block_size {model.cfg.block_size})")
    out = torch.empty((batch, final_length), dtype=idx.dtype, device=idx.device)
    out[:, :prompt_length] = idx
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            past = None
            for position in range(prompt_length, final_length):
                if not use_cache:
                    logits = model(out[:, :position]).logits
                elif past is None:
                    result = model(out[:, :position], use_cache=True)
                    logits, past = result.logits, result.past_key_values
                else:
                    result = model(out[:, position - 1 : position], past_key_values=past, use_cache=True)
                    logits, past = result.logits, result.past_key_values
                last = logits[:, -1, :]
                if temperature == 0:
                    chosen = last.argmax(dim=-1)
                else:
                    chosen = torch.multinomial(next_token_probs(last, temperature, top_k), 1,
                                               generator=generator).squeeze(-1)
                out[:, position] = chosen
    finally:
        model.train(was_training)
    return out

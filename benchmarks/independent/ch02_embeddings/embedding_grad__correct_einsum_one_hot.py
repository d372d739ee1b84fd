# exercise: embedding_grad
# kind: correct
# class: value
# rule: the E^T G rule of the notebook, with E built by comparing the flat ids to arange(V) and the
#       product written as an einsum over positions; E is cast to upstream's dtype, so the result keeps
#       upstream's dtype and device; any ids shape [...] with upstream [..., d].
# shows: n/a (correct body)
def embedding_grad(ids, upstream, vocab_size):
    width = upstream.shape[-1]
    flat_ids = ids.reshape(-1).to(device=upstream.device, dtype=torch.int64)
    grads = upstream.reshape(-1, width)
    columns = torch.arange(vocab_size, device=upstream.device)
    selector = (flat_ids[:, None] == columns[None, :]).to(upstream.dtype)  # [N, V]
    return torch.einsum("nv,nd->vd", selector, grads)

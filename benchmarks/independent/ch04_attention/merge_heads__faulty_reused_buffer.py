# exercise: merge_heads
# kind: faulty
# class: aliasing
# rule: each call returns its own [B, T, d] result; this body writes into one preallocated tensor kept on
#       the module and returns it every time, so an earlier result changes when merge_heads is called again
#       (e.g. a block's attention output from the previous decoding step)
# shows: o1 = a.merge_heads(torch.zeros(1, 2, 3, 2)); o2 = a.merge_heads(torch.ones(1, 2, 3, 2)):
#        o1 is now all ones (o1 is o2)
def merge_heads(self, t):
    batch, heads, length, head_dim = t.shape
    buffer = getattr(self, "_merge_buffer", None)
    if buffer is None or buffer.shape != (batch, length, heads * head_dim) \
            or buffer.dtype != t.dtype or buffer.device != t.device:
        buffer = t.new_empty(batch, length, heads * head_dim)
        self._merge_buffer = buffer
    buffer.view(batch, length, heads, head_dim).copy_(t.transpose(1, 2))
    return buffer

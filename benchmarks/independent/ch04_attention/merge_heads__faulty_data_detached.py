# exercise: merge_heads
# kind: faulty
# class: gradient
# rule: merge_heads sits between the attention weights @ v and self.proj in the trained model; going through
#       .data drops the graph, so no gradient reaches qkv (only proj still learns)
# shows: s = torch.randn(1, 2, 3, 2, requires_grad=True); a.merge_heads(s).requires_grad is False
def merge_heads(self, t):
    batch, heads, length, head_dim = t.shape
    return t.data.transpose(1, 2).reshape(batch, length, heads * head_dim)

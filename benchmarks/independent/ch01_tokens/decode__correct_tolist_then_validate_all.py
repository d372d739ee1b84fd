# exercise: decode
# kind: correct
# class: value
# rule: normalises the input first (a tensor via .tolist(), every id via operator.index), checks
#       the whole sequence against [0, V) before any lookup, then joins with
#       map(self.itos.__getitem__) instead of a comprehension.
# shows: -
def decode(self, ids):
    import operator
    if hasattr(ids, "tolist"):
        ids = ids.tolist()
    values = [operator.index(i) for i in ids]
    size = len(self.itos)
    for i in values:
        if i < 0 or i >= size:
            raise ValueError(f"id {i} is outside [0, {size})")
    return "".join(map(self.itos.__getitem__, values))

# exercise: decode
# kind: faulty
# class: type
# rule: "ids 可以是整数列表，也可以是一维整数张量" (notebook exercise text). This body insists that
#       every element is a Python int, so a 1-D int64 tensor (elements are 0-d tensors) is refused.
# shows: Tokenizer(["<unk>", "a", "b"]).decode(torch.tensor([1, 2])) raises TypeError instead
#        of returning "ab".
def decode(self, ids):
    pieces = []
    for i in ids:
        if not isinstance(i, int):
            raise TypeError(f"ids must be int, got {type(i).__name__}")
        if not 0 <= i < self.vocab_size:
            raise ValueError(f"id {i} is outside [0, {self.vocab_size})")
        pieces.append(self.itos[i])
    return "".join(pieces)

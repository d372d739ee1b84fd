# exercise: decode
# kind: faulty
# class: rule
# rule: "任何不在 [0, V) 里的 id（包括负数）抛出 ValueError" applies to tensors as well as lists
#       (notebook exercise text). This body validates list input only and trusts tensors, so a
#       negative id in a tensor wraps around like a Python list index.
# shows: Tokenizer(["<unk>", "a", "b"]).decode(torch.tensor([1, -1])) returns "ab" instead of
#        raising ValueError.
def decode(self, ids):
    if isinstance(ids, (list, tuple)):
        for i in ids:
            if i < 0 or i >= self.vocab_size:
                raise ValueError(f"id {i} is outside [0, {self.vocab_size})")
    return "".join(self.itos[int(i)] for i in ids)

# exercise: decode
# kind: faulty
# class: value
# rule: ids may be "一维整数张量" (notebook) and decode([]) is "" (visible check); an empty 1-D
#       tensor is an allowed input too. The tensor branch validates with ids.min()/ids.max(),
#       which raise RuntimeError on an empty tensor.
# shows: Tokenizer(["<unk>", "a"]).decode(torch.tensor([], dtype=torch.long)) raises
#        RuntimeError instead of returning "".
def decode(self, ids):
    size = self.vocab_size
    if hasattr(ids, "tolist"):
        if int(ids.min()) < 0 or int(ids.max()) >= size:
            raise ValueError(f"an id is outside [0, {size})")
        ids = ids.tolist()
    else:
        for i in ids:
            if not 0 <= i < size:
                raise ValueError(f"id {i} is outside [0, {size})")
    return "".join(self.itos[i] for i in ids)

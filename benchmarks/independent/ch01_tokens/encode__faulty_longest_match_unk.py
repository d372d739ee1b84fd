# exercise: encode
# kind: faulty
# class: rule
# rule: "A list of ids, one per character" (docstring); notebook: "每个字恰好一个 id". This body
#       does a greedy longest-match over the vocabulary's tokens, so the 5-character text
#       "<unk>" becomes the single id of the token "<unk>".
# shows: Tokenizer(["<unk>", "<", "u", "n", "k", ">"]).encode("<unk>") gives [0] instead of
#        [1, 2, 3, 4, 5]; Tokenizer(["<unk>", "a"]).encode("a<unk>") gives [1, 0] (2 ids for
#        6 characters) instead of [1, 0, 0, 0, 0, 0].
def encode(self, text):
    if not isinstance(text, str):
        raise TypeError("encode expects a str")
    longest = max(len(token) for token in self.itos)
    ids, pos = [], 0
    while pos < len(text):
        for width in range(min(longest, len(text) - pos), 0, -1):
            piece = text[pos:pos + width]
            if piece in self.stoi:
                ids.append(self.stoi[piece])
                pos += width
                break
        else:
            ids.append(self.unk_id)
            pos += 1
    return ids

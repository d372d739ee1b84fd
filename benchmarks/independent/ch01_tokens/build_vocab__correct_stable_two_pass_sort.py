# exercise: build_vocab
# kind: correct
# class: value
# rule: counts with a plain dict (no Counter), then two stable sorts: first by character
#       (str order is code point order), then by descending count; stability keeps the
#       code-point order inside each tie. Cap counts <unk>.
# shows: -
def build_vocab(text, max_size):
    counts = {}
    for ch in text:
        counts[ch] = counts.get(ch, 0) + 1
    ranked = sorted(counts)
    ranked.sort(key=counts.__getitem__, reverse=True)
    vocab = [UNK]
    for ch in ranked:
        if len(vocab) >= max_size:
            break
        vocab.append(ch)
    return vocab

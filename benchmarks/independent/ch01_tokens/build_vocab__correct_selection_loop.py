# exercise: build_vocab
# kind: correct
# class: value
# rule: no sort at all: repeatedly picks the best remaining character with max() over the
#       key (count, -code point), i.e. a selection loop, until the cap (which counts <unk>)
#       is reached or no characters are left.
# shows: -
def build_vocab(text, max_size):
    remaining = Counter(text)
    itos = [UNK]
    while remaining and len(itos) < max_size:
        best = max(remaining, key=lambda ch: (remaining[ch], -ord(ch)))
        itos.append(best)
        del remaining[best]
    return itos

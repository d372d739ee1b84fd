# exercise: build_vocab
# kind: faulty
# class: aliasing
# rule: results are new objects, not something kept between calls ("结果放在新的对象里返回 ...
#       不是在调用之间保存下来的缓存", notebook glossary). This body refills and returns one
#       module-level list, so an earlier vocabulary changes when build_vocab is called again.
# shows: a = build_vocab("aab", 3); b = build_vocab("xyz", 2); now a == ['<unk>', 'x'] (and
#        a is b) instead of ['<unk>', 'a', 'b'].
def build_vocab(text, max_size):
    buffer = globals().setdefault("_vocab_buffer", [])
    counts = Counter(text)
    ranked = sorted(counts, key=lambda ch: (-counts[ch], ord(ch)))
    buffer[:] = [UNK] + ranked[:max(max_size - 1, 0)]
    return buffer

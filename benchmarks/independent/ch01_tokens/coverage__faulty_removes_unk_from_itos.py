# exercise: coverage
# kind: faulty
# class: in-place
# rule: exercise functions only read their arguments ("调用结束时，每个参数（张量、列表、字典）都
#       必须和调用前一模一样", notebook glossary). To make "<unk> covers nothing" true this body
#       removes "<unk>" from the caller's itos list.
# shows: itos = ["<unk>", "a"]; coverage(itos, "ab") returns 0.5 but afterwards itos == ["a"]
#        (a second call, or Tokenizer(itos), then sees a vocabulary without <unk>).
def coverage(itos, text):
    if UNK in itos:
        itos.remove(UNK)
    held = set(itos)
    return sum(1 for ch in text if ch in held) / len(text)

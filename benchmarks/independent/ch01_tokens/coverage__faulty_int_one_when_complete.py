# exercise: coverage
# kind: faulty
# class: type
# rule: the result is "一个 0 到 1 之间的浮点数" (notebook exercise text) and returned numbers are
#       Python floats where a float is said (glossary). This body short-cuts the full-coverage
#       case and returns the int 1.
# shows: coverage(["<unk>", "a", "b"], "abba") returns 1 (type int) instead of 1.0.
def coverage(itos, text):
    held = set(itos) - {UNK}
    missing = sum(ch not in held for ch in text)
    if missing == 0:
        return 1
    return (len(text) - missing) / len(text)

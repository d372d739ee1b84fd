# exercise: coverage
# kind: faulty
# class: value
# rule: "`<unk>` 本身不覆盖任何字" (notebook exercise text; docstring: characters that do not
#       become <unk>). This body sums text.count(token) over every vocabulary entry, <unk>
#       included, so a literal "<unk>" substring in the text is counted as one covered character.
# shows: coverage(["<unk>", "a"], "a<unk>") returns 2/6 = 0.333 instead of 1/6 = 0.1667.
def coverage(itos, text):
    covered = sum(text.count(token) for token in set(itos))
    return covered / len(text)

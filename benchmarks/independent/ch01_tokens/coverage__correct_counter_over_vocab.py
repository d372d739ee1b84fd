# exercise: coverage
# kind: correct
# class: value
# rule: counts the text once with Counter and sums the counts of the vocabulary's distinct
#       entries (skipping "<unk>"), instead of testing each character of the text for membership.
# shows: -
def coverage(itos, text):
    counts = Counter(text)
    held = set(itos)
    held.discard(UNK)
    covered = sum(counts[token] for token in held)
    return covered / len(text)

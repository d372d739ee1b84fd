# exercise: untrained_positions
# kind: faulty
# class: in-place
# rule: `lengths` is the caller's data, only read (docstring: "given the lengths of the training
#       sequences"); sorting it in place to find the longest reorders the caller's list.
# shows: L = [5, 12, 9]; untrained_positions(L, 16) returns [12, 13, 14, 15] but L becomes [5, 9, 12].
def untrained_positions(lengths, block_size):
    lengths.sort()
    longest = lengths[-1] if lengths else 0
    return list(range(longest, block_size))

# exercise: untrained_positions
# kind: faulty
# class: type
# rule: the result is "由 Python 整数组成的 list" (notebook exercise untrained_positions); list() of a tensor
#       gives 0-d tensors, not ints.
# shows: untrained_positions([2, 4, 3], 7) returns [tensor(4), tensor(5), tensor(6)] instead of [4, 5, 6].
def untrained_positions(lengths, block_size):
    longest = max(lengths) if lengths else 0
    return list(torch.arange(min(longest, block_size), block_size))

# exercise: untrained_positions
# kind: correct
# class: value
# rule: marks every row each sequence reads in a boolean mask (one slice per sequence, longer than C
#       simply clipped by the slice), then lists the unmarked rows with nonzero and converts to Python ints,
#       instead of range(max(lengths), C).
def untrained_positions(lengths, block_size):
    read = torch.zeros(block_size, dtype=torch.bool)
    for length in lengths:
        read[:max(int(length), 0)] = True
    return [int(row) for row in torch.nonzero(~read).flatten().tolist()]

# exercise: untrained_positions
# kind: correct
# class: value
# rule: takes the union of the rows read by every sequence as a set and subtracts it from all rows, then
#       sorts; works without max(), so an empty list of lengths gives every row.
def untrained_positions(lengths, block_size):
    read = set()
    for length in lengths:
        read.update(range(min(length, block_size)))
    return sorted(set(range(block_size)) - read)

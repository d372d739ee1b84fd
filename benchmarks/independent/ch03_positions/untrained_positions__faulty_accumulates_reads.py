# exercise: untrained_positions
# kind: faulty
# class: hidden-state
# rule: the answer depends on the `lengths` and `block_size` of this call only; keeping the rows read by
#       every earlier call in a function attribute makes a later call with shorter sequences report too few
#       untrained rows.
# shows: untrained_positions([6], 8) -> [6, 7]; then untrained_positions([2], 8) returns [6, 7] instead of
#        [2, 3, 4, 5, 6, 7].
def untrained_positions(lengths, block_size):
    seen = untrained_positions.__dict__.setdefault("rows_read", set())
    for length in lengths:
        seen.update(range(length))
    return [row for row in range(block_size) if row not in seen]

# exercise: untrained_positions
# kind: faulty
# class: value
# rule: notebook section 7 "长度为 L 的序列从位置 0 读起，读第 0 到 L-1 行"; treating row L as read too
#       (off by one) drops the first untrained row.
# shows: untrained_positions([5, 12, 9], 16) returns [13, 14, 15] instead of [12, 13, 14, 15].
def untrained_positions(lengths, block_size):
    longest = max(lengths) if lengths else -1
    return list(range(longest + 1, block_size))

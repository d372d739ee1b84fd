"""Known misconceptions of chapter 3, each written as a faulty exercise body.

One catalogue serves two purposes:
- diagnosis: when a student's outputs match a fault's outputs on the hidden cases, the
  feedback names that misconception;
- samples: `hero samples OUT` writes one faulty sample submission per fault (reference
  everywhere else), and the tests prove each one loses points exactly on its exercise.

Every fault is the reference body with a line or two changed (`fault.change`): each edit
names the reference text it replaces, which must occur exactly once in that body.
"""

from autograder.registry import catalogue

CATALOGUE, fault = catalogue("fault")

# the reference's lines that several faults edit
NOT_NEGATIVE = ('if start < 0 or length < 0:\n'
                '    raise ValueError(f"start={start} 和 length={length} 不能为负 (must not be negative)")\n')
IDS_BOUND = "if start + length > block_size:"
IDS_BOUND_CHECK = (IDS_BOUND + '\n'
                   '    raise ValueError(f"序列长度 {start + length} 超过 block_size={block_size}，位置表没有这么多行 "\n'
                   '                     f"(sequence length {start + length} exceeds block_size={block_size})")\n')
IDS = "return torch.arange(start, start + length)"
ROWS_BOUND = "if start + length > table.shape[0]:"
ROWS_BOUND_CHECK = (ROWS_BOUND + '\n'
                    '    raise ValueError(f"序列长度 {start + length} 超过 block_size={table.shape[0]}，位置表没有这么多行 "\n'
                    '                     f"(sequence length {start + length} exceeds block_size={table.shape[0]})")\n')
ROWS = "table[start : start + length]"
ROW_IDS = "torch.arange(start, start + length, device=table.device)"
UNTRAINED = "return list(range(min(longest, block_size), block_size))"


# --- position_ids ----------------------------------------------------------------------


fault.change("position_ids", "bound_off_by_one",
             "边界差一：start + T 恰好等于 C 时最后一行 C-1 存在，却报了错（用了 >= 而不是 >）。",
             "off by one at the bound: with start + T equal to C the last row C-1 exists, yet it raised (>= instead "
             "of >).",
             (IDS_BOUND, "if start + length >= block_size:"))

fault.change("position_ids", "start_ignored",
             "忽略了 start：缓存里已有 start 个词元，新词元应从 start 接着编号，而不是又从 0 开始。",
             "start is ignored: start tokens are already cached, so the new ids continue at start instead of "
             "restarting at 0.",
             (IDS, "return torch.arange(length)"))

fault.change("position_ids", "ids_from_one", "编号从 1 开始；位置表的行从 0 数起，第一个词元读第 0 行。",
             "the ids start at 1; the table's rows count from 0, and the first token reads row 0.",
             (IDS, "return torch.arange(start + 1, start + length + 1)"))

fault.change("position_ids", "float_ids", "编号是浮点数；它们要拿去索引位置表的行，应为整数 int64。",
             "the ids are floats; they index rows of the table, so they must be int64 integers.",
             (IDS, "return torch.arange(start, start + length, dtype=torch.float32)"))

fault.change("position_ids", "clamped_to_last_row",
             "超出 C 的位置被截断（clamp）到最后一行 C-1，而不是报错：后面的词元全挤在同一个位置上。",
             "positions past C are clamped to the last row C-1 instead of raising: every later token lands on one "
             "position.",
             (IDS_BOUND_CHECK, ""), (IDS, IDS + ".clamp(max=block_size - 1)"))

fault.change("position_ids", "wrapped_around",
             "超出 C 的位置取模绕回了开头（% C），而不是报错：位置 C 被当成了位置 0。",
             "positions past C wrap around to the start (% C) instead of raising: position C is taken for position 0.",
             (IDS_BOUND_CHECK, ""), (IDS, IDS + " % block_size"))

fault.change("position_ids", "bound_ignores_start",
             "只检查了本次的长度 T <= C，没有把缓存里的 start 个词元算进去：应检查 start + T <= C。",
             "only the new length T <= C is checked, without the start cached tokens: the bound is start + T <= C.",
             (IDS_BOUND, "if length > block_size:"))

fault.change("position_ids", "negative_start_accepted",
             "负的 start 没有被拒绝：负编号在 PyTorch 里会从表尾倒着取行，悄悄变成另一个位置。",
             "a negative start is not refused: PyTorch reads a negative index from the end of the table, silently "
             "another position.",
             (NOT_NEGATIVE, ""))


fault.change("position_ids", "view_of_a_kept_table",
             "返回的是函数之外保存的一张 arange 表的切片（视图）：每次调用交出的是同一块内存，调用者改动一次结果"
             "（比如 ids += 1），之后每次调用的编号都跟着错。每次调用返回新建的张量。",
             "the ids are a slice (a view) of an arange table kept outside the function: every call hands out the "
             "same memory, so a caller who changes one result (ids += 1, say) changes the ids of every later call. "
             "Return a new tensor from each call.",
             ("return torch.arange(start, start + length)",
              "global POSITIONS  # a module-level table, made once\n"
              "try:\n"
              "    table = POSITIONS\n"
              "except NameError:\n"
              "    table = POSITIONS = torch.arange(4096)\n"
              "return table[start : start + length]"))


# --- add_positions ---------------------------------------------------------------------


fault.change("add_positions", "rows_from_zero",
             "忽略了 start：总是取第 0 到 T-1 行（table[:T]）；有缓存时新词元应取第 start 到 start+T-1 行。",
             "start is ignored: rows 0 to T-1 are always taken (table[:T]); after a cache the new tokens take rows "
             "start to start+T-1.",
             (ROWS, "table[:length]"))

fault.change("add_positions", "last_rows",
             "取了位置表的最后 T 行（table[-T:]）；位置 t 读第 t 行，从 start 数起，不是从表尾倒数。",
             "the last T rows of the table were taken (table[-T:]); position t reads row t, counted from start, not "
             "from the end of the table.",
             (ROWS, "table[-length:]"))

fault.change("add_positions", "rows_per_sequence",
             "沿错误的轴广播：给批量里每条序列各取了一行（行数对着 B），而位置行应对着时间轴 T、由所有序列共用。",
             "broadcast over the wrong axis: one row per sequence of the batch (rows along B), where the rows run "
             "along the time axis T and every sequence shares them.",
             (ROWS, "table[start : start + token_vectors.shape[0]].unsqueeze(1)"))

fault.change("add_positions", "concatenated",
             "把位置向量拼接（cat）到词向量后面，宽度变成 2d；学习式位置向量是逐元素相加的。",
             "the position vectors were concatenated (cat) after the token vectors, making the width 2d; learned "
             "positions are added element-wise.",
             ("return token_vectors + " + ROWS,
              "return torch.cat([token_vectors, " + ROWS + ".expand(token_vectors.shape[0], -1, -1)], dim=-1)"))

fault.change("add_positions", "no_bound_check",
             "没有检查 start + T <= C：切片 table[start:start+T] 悄悄变短，只剩一行时被广播到所有位置，"
             "否则由 PyTorch 报形状错误；应先抛出明确的 ValueError。",
             "start + T <= C is not checked: the slice table[start:start+T] silently comes out shorter, a single row "
             "is broadcast to every position, and otherwise PyTorch raises a shape error; raise a clear ValueError "
             "first.",
             (ROWS_BOUND_CHECK, ""))

fault.change("add_positions", "add_bound_off_by_one",
             "边界差一：start + T 恰好等于 C 时最后一行 C-1 存在，却报了错（用了 >= 而不是 >）。",
             "off by one at the bound: with start + T equal to C the last row C-1 exists, yet it raised (>= instead "
             "of >).",
             (ROWS_BOUND, "if start + length >= table.shape[0]:"))

fault.change("add_positions", "clamped_rows",
             "超出 C 的位置被截断（clamp）到最后一行，而不是报错：后面的词元都拿到同一个位置向量。",
             "positions past C are clamped to the last row instead of raising: every later token gets the same "
             "position vector.",
             (ROWS_BOUND_CHECK, ""), (ROWS, "table[" + ROW_IDS + ".clamp(max=table.shape[0] - 1)]"))

fault.change("add_positions", "wrapped_rows",
             "超出 C 的位置取模绕回了表头（% C），而不是报错：位置 C 拿到了位置 0 的向量。",
             "positions past C wrap around to the top of the table (% C) instead of raising: position C gets the "
             "vector of position 0.",
             (ROWS_BOUND_CHECK, ""), (ROWS, "table[" + ROW_IDS + " % table.shape[0]]"))

fault.change("add_positions", "add_bound_ignores_start",
             "只检查了本次的长度 T <= C，没有把缓存里的 start 个词元算进去：应检查 start + T <= C。",
             "only the new length T <= C is checked, without the start cached tokens: the bound is start + T <= C.",
             (ROWS_BOUND, "if length > table.shape[0]:"))


# --- untrained_positions --------------------------------------------------------------


fault.change("untrained_positions", "untrained_off_by_one",
             "差一：长度为 L 的序列读第 0 到 L-1 行，第 L 行没有被读到，也应列出。",
             "off by one: a sequence of length L reads rows 0 to L-1, so row L is unread and belongs in the list.",
             ("min(longest, block_size)", "min(longest + 1, block_size)"), observed=True)

fault.change("untrained_positions", "shortest_length",
             "用了最短的序列长度；只要有一条序列读到某一行，这一行就得到梯度，所以要看最长的那条。",
             "the shortest length was used; a row gets a gradient as soon as one sequence reads it, so the longest "
             "sequence decides.",
             ("max(lengths, default=0)", "min(lengths, default=0)"))

fault.change("untrained_positions", "trained_rows",
             "列出的是训练过的行（0 到 L-1）；题目要的是没有任何序列读到的那些行。",
             "the trained rows (0 to L-1) were listed; the question asks for the rows no sequence reads.",
             (UNTRAINED, "return list(range(min(longest, block_size)))"))

fault.change("untrained_positions", "descending_rows", "行号按降序排列；应按升序给出。",
             "the rows are listed in descending order; they are asked in ascending order.",
             (UNTRAINED, "return list(range(block_size - 1, min(longest, block_size) - 1, -1))"))

fault.change("untrained_positions", "numpy_ids",
             "行号是 numpy 的整数（numpy.int64），不是 Python 的 int：本课程的函数返回 Python 自己的数"
             "（张量转列表用 .tolist()）。",
             "the row numbers are numpy integers (numpy.int64), not Python ints: the course's functions return "
             "Python's own numbers (a tensor becomes a list with .tolist()).",
             ("return list(range(min(longest, block_size), block_size))",
              "return list(torch.arange(min(longest, block_size), block_size).numpy())"))


# --- gradients and the contract, from the independent set (issue 39) ----------------------------


fault.change("add_positions", "table_detached",
             "梯度到不了位置表（.detach()、.data 或 torch.no_grad() 会把它从计算图上剪下来）：数值没错，但它学不到任何东西；位置表和词嵌入一样随训练更新。",
             "no gradient reaches the position table (.detach(), .data or torch.no_grad() cuts it from the graph):"
             " the values are right, but it learns nothing; the position table is trained, as the token embeddings"
             " are.",
             ("return token_vectors + table[start : start + length]",
              "return token_vectors + table[start : start + length].detach()"), observed=True)

fault.change("untrained_positions", "lengths_sorted",
             "lengths 被原地排序了（.sort()）：练习函数只读传给它的列表，调用之后它必须和调用前一样。",
             "lengths was sorted in place (.sort()): an exercise only reads the list it is given, which must be as it "
             "was after the call.",
             ("longest = max(lengths, default=0)", "lengths.sort()\nlongest = lengths[-1] if lengths else 0"))

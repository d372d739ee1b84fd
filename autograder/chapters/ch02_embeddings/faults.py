"""Known misconceptions of chapter 2, each written as a faulty exercise body.

One catalogue serves two purposes:
- diagnosis: when a student's outputs match a fault's outputs on the hidden cases, the
  feedback names that misconception;
- samples: `hero samples OUT` writes one faulty sample submission per fault (reference
  everywhere else), and the tests prove each one loses points exactly on its exercise.

Most faults are the reference body with a line or two changed (`fault.change`); the few written
whole compute something else altogether, with the signature of the exercise they replace and
only names that embeddings.py itself has (torch); numbers the module names (INIT_STD) are
written out.
"""

import torch

from autograder.registry import catalogue

CATALOGUE, fault = catalogue("fault")

# the reference's lines that several faults edit
TYPE_CHECK = ('if ids.dtype not in (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8):\n'
              '    raise TypeError(f"ids 应为整数张量，收到 {ids.dtype} (ids must be an integer tensor)")\n')
ONE_HOT_RANGE_CHECK = ('if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= vocab_size):\n'
                       '    raise ValueError(f"id 超出 [0, {vocab_size}) (an id is out of range)")\n')
SCATTERED = "return rows.scatter_(-1, ids.long().unsqueeze(-1), 1.0)"
LOOKUP_RANGE_CHECK = ('if ids.numel() and (ids.min() < 0 or ids.max() >= weight.shape[0]):\n'
                      '    raise ValueError(f"id 超出 [0, {weight.shape[0]}) (an id is out of range)")\n')
LOOKUP = "return weight[ids]"
ADDED = "return grad.index_add_(0, ids.reshape(-1), upstream.reshape(-1, width))"
DRAWN = "weight.normal_(0.0, std, generator=generator)"


# --- one_hot -------------------------------------------------------------------------


fault.change("one_hot", "integer_rows",
             "one-hot 行返回成了整数（int64）；它要和浮点嵌入表相乘，应按 dtype 参数返回浮点数（默认 float32）。",
             "the one-hot rows come back as integers (int64); they multiply a float table, so return the dtype asked "
             "for (float32 by default).",
             ("dtype=dtype, device=ids.device", "dtype=torch.int64, device=ids.device"))


@fault("one_hot", "把 id 当成了从 1 数起的列号：id i 的 1 应在第 i 列（从 0 数起），id 0 在第一列。",
       "the id was taken as a column number counted from 1: the 1 of id i sits in column i (counting from 0), and "
       "id 0 in the first column.")
def one_based_columns(ids, vocab_size, dtype=torch.float32):
    # written whole: columns numbered 1..V compared with the ids, which scatter_ cannot express
    if ids.is_floating_point():
        raise TypeError("ids must be an integer tensor")
    if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= vocab_size):
        raise ValueError("an id is out of range")
    columns = torch.arange(1, vocab_size + 1, device=ids.device)
    return (ids.long().unsqueeze(-1) == columns).to(dtype)


fault.change("one_hot", "vocab_axis_first",
             "词表轴放在了最前面（转置）：[B,T] 的 ids 应得到 [B,T,V]，每个位置一行，不是 [V,B,T]。",
             "the vocabulary axis comes first (transposed): ids of shape [B,T] give [B,T,V], one row per position, "
             "not [V,B,T].",
             (SCATTERED, SCATTERED + ".movedim(-1, 0)"))


@fault("one_hot", "没有检查 id 的范围：越界或为负的 id 会悄悄变成一整行 0，应当抛出 ValueError。",
       "the ids' range is not checked: an id out of range (or negative) silently becomes a row of zeros; it must "
       "raise ValueError.")
def out_of_range_zero_row(ids, vocab_size, dtype=torch.float32):
    # written whole: only a comparison with arange turns an out-of-range id into zeros (scatter_ raises)
    if ids.is_floating_point():
        raise TypeError("ids must be an integer tensor")
    return (ids.long().unsqueeze(-1) == torch.arange(vocab_size, device=ids.device)).to(dtype)


fault.change("one_hot", "out_of_range_left_to_scatter",
             "没有检查 id 的范围，越界或为负的 id 留给了 scatter_，它抛出的是 RuntimeError（index out of bounds）；"
             "应在写入之前自己检查 [0, vocab_size)，抛出 ValueError。",
             "the ids' range is not checked and an id out of range (or negative) is left to scatter_, which raises "
             "RuntimeError (index out of bounds); check [0, vocab_size) yourself before writing and raise ValueError.",
             (ONE_HOT_RANGE_CHECK, ""))


fault.change("one_hot", "float_ids_truncated",
             "浮点 id 被悄悄截断成了整数；id 是整数编号，收到浮点张量应抛出 TypeError。",
             "float ids were silently truncated to integers; ids are integer labels, and a float tensor must raise "
             "TypeError.",
             (TYPE_CHECK, "ids = ids.long()\n"))


# --- embed -----------------------------------------------------------------------------


fault.change("embed", "column_read",
             "读的是表的第 id 列（W[:, id]，即 W.T 的行），而不是第 id 行；表的形状是 [V, d]，每个 id 一行。"
             "V = d 时形状碰巧对，数值仍然错。",
             "column id of the table was read (W[:, id], a row of W.T) instead of row id; the table is [V, d], one row "
             "per id. When V = d the shape happens to fit and the values are still wrong.",
             (LOOKUP, "return weight.T[ids]"))

fault.change("embed", "ids_transposed",
             "把 ids 转置后再查表（weight[ids.T]）：[B,T] 的 ids 应得到 [B,T,d]，批量轴在前、时间轴在后。",
             "the ids were transposed before the lookup (weight[ids.T]): ids of shape [B,T] give [B,T,d], batch "
             "first, then time.",
             (LOOKUP, "return weight[ids.transpose(0, -1)]"))

fault.change("embed", "negative_ids_wrap",
             "没有检查 id 的范围：负的 id 会悄悄读到表尾的行（Python 的负索引），越界的 id 报的是 IndexError；"
             "两者都应抛出明确的 ValueError。",
             "the ids' range is not checked: a negative id silently reads a row from the end of the table (Python's "
             "negative indexing) and an id past the end raises IndexError; both must raise a clear ValueError.",
             (LOOKUP_RANGE_CHECK, ""))

fault.change("embed", "lookup_without_grad",
             "查表放在了 torch.no_grad() 里：查表也是计算图的一部分，损失的梯度要流回被读到的那些行。",
             "the lookup runs under torch.no_grad(): it is part of the graph, and the loss's gradient must flow back "
             "to the rows it read.",
             (LOOKUP, "with torch.no_grad():\n    return weight[ids]"))


# --- embedding_grad ----------------------------------------------------------------------


fault.change("embedding_grad", "overwrite_repeated",
             "重复出现的 id 被覆盖而不是累加（赋值或 index_copy）：同一行被几个位置读到，它的梯度是这些位置的上游梯度之和。",
             "a repeated id was overwritten instead of accumulated (assignment or index_copy): a row read by several "
             "positions gets the sum of their upstream gradients.",
             (ADDED, "grad[ids.reshape(-1)] = upstream.reshape(-1, width)\nreturn grad"))

fault.change("embedding_grad", "mean_per_row",
             "对重复出现的 id 取了平均（除以出现次数）：链式法则要的是和，读了三次就得到三份上游梯度。",
             "a repeated id's upstream rows were averaged (divided by the count): the chain rule gives their sum; a "
             "row read three times gets three upstream rows.",
             (ADDED, "grad.index_add_(0, ids.reshape(-1), upstream.reshape(-1, width))\n"
                     "counts = torch.zeros(vocab_size, dtype=upstream.dtype, device=upstream.device)\n"
                     "counts.index_add_(0, ids.reshape(-1), torch.ones(ids.numel(), dtype=upstream.dtype, "
                     "device=upstream.device))\n"
                     "return grad / counts.clamp(min=1).unsqueeze(-1)"))

fault.change("embedding_grad", "divided_by_positions",
             "又把上游梯度除以了位置数 B·T：如果损失取了平均，这个 1/(B·T) 已经在上游梯度里了，表的梯度只是把上游行按 id 相加。",
             "the upstream gradient was divided again by the number of positions B*T: if the loss is a mean, that "
             "1/(B*T) is already inside the upstream gradient; the table's gradient only adds the upstream rows by "
             "id.",
             (ADDED, ADDED + " / ids.numel()"))

fault.change("embedding_grad", "transposed_grad",
             "结果被转置成了 [d, V]：参数的梯度与参数同形，嵌入表是 [V, d]，每个 id 一行。",
             "the result was transposed to [d, V]: a parameter's gradient has the parameter's shape, and the table "
             "is [V, d], one row per id.",
             (ADDED, ADDED + ".T"))


@fault("embedding_grad", "把全部上游梯度加到了表的每一行：只有这一批读到的行才有梯度，没被读到的行应恰好为 0。",
       "the whole upstream gradient was added to every row of the table: only the rows this batch read get a "
       "gradient; the others are exactly zero.")
def every_row_gets_gradient(ids, upstream, vocab_size):
    # written whole: it never looks at the ids
    width = upstream.shape[-1]
    total = upstream.reshape(-1, width).sum(0)
    return total.expand(vocab_size, width).clone()


# --- init_normal -------------------------------------------------------------------------


fault.change("init_normal", "own_normal_sampler",
             "正态数是自己用 Box–Muller 从均匀数变换出来的：分布没错，但同一个种子给出的是另一组数，与参考实现和"
             "同学的表都不同。题目要求用 PyTorch 自己的 normal_（或 torch.nn.init.normal_）从 generator 抽取。",
             "the normal numbers come from uniform ones by Box-Muller: the distribution is right, but a seed gives "
             "other numbers than the reference's and everyone else's. The text asks for torch's own normal_ (or "
             "torch.nn.init.normal_) drawing from the generator.",
             ("return weight.normal_(0.0, std, generator=generator)",
              "u1 = torch.rand(weight.shape, generator=generator, dtype=torch.float64).clamp_min(1e-12)\n"
              "u2 = torch.rand(weight.shape, generator=generator, dtype=torch.float64)\n"
              "z = torch.sqrt(-2.0 * torch.log(u1)) * torch.cos(2.0 * torch.pi * u2)\n"
              "return weight.copy_(std * z)"))

fault.change("init_normal", "std_read_as_variance",
             "把 0.02 当成了方差：N(0, 0.02²) 里 0.02 是标准差；当成方差，标准差就成了 √0.02 ≈ 0.141，大了七倍多。",
             "0.02 was read as the variance: in N(0, 0.02^2) 0.02 is the standard deviation; read as a variance, "
             "the standard deviation becomes sqrt(0.02) = 0.141, over seven times too large.",
             (DRAWN, "weight.normal_(0.0, std ** 0.5, generator=generator)"))

fault.change("init_normal", "std_passed_as_mean",
             "std 被传成了均值：weight.normal_(std) 的第一个位置参数是 mean，结果成了 N(std, 1)。"
             "请写 normal_(0.0, std, ...) 或 normal_(mean=0.0, std=std, ...)。",
             "std was passed as the mean: the first positional argument of weight.normal_(std) is mean, giving "
             "N(std, 1). Write normal_(0.0, std, ...) or normal_(mean=0.0, std=std, ...).",
             (DRAWN, "weight.normal_(std, generator=generator)"))

fault.change("init_normal", "uniform_instead",
             "用了均匀分布 U(-std, std)：本课程的初始化是正态分布 N(0, std²)；均匀分布的标准差只有 std/√3。",
             "a uniform U(-std, std) was drawn: the course initialises from the normal N(0, std^2); the uniform's "
             "standard deviation is only std/sqrt(3).",
             (DRAWN, "weight.uniform_(-std, std, generator=generator)"))

fault.change("init_normal", "global_rng",
             "数字取自全局随机数发生器，没有用传入的 generator：同一个 generator 随机种子应当给出同样的表，不受全局随机种子影响。",
             "the numbers come from the global RNG, not from the generator passed in: a generator seeded alike must "
             "give the same table whatever the global seed.",
             (DRAWN, "weight.normal_(0.0, std)"))


@fault("init_normal", "返回了一个新张量，传入的张量没有变：init_normal_ 的下划线表示原地修改，模型里的参数对象要被"
       "就地填充，并把它本身返回。",
       "a new tensor was returned and the one passed in is unchanged: the trailing underscore of init_normal_ "
       "means in place; the model's parameter must be filled where it is, and returned itself.")
def not_in_place(weight, std=0.02, generator=None):
    # written whole: a fresh tensor from torch.randn, never the argument
    return torch.randn(weight.shape, generator=generator, dtype=weight.dtype, device=weight.device) * std


fault.change("init_normal", "no_grad_missing",
             "没有放在 torch.no_grad() 里：对 requires_grad 的参数（nn.Parameter）原地写入会报错；初始化不是要求导的计算。",
             "not wrapped in torch.no_grad(): writing in place into a tensor that requires grad (an nn.Parameter) "
             "raises; initialisation is not a computation to differentiate.",
             ("with torch.no_grad():\n    return " + DRAWN, "return " + DRAWN))

fault.change("init_normal", "std_ignored",
             "忽略了 std 参数，总是用 0.02：0.02 只是默认值，调用者给出别的 std 时要用它。",
             "the std argument is ignored and 0.02 always used: 0.02 is only the default; when the caller passes "
             "another std, use it.",
             (DRAWN, "weight.normal_(0.0, 0.02, generator=generator)"))


# --- the rules, from the independent set (issue 39) ---------------------------------------------


fault.change("one_hot", "only_float32_refused",
             "只有 float32 的 ids 抛出 TypeError：任何浮点 ids（float64、float16……）都不是整数 id，一样要抛出。",
             "only float32 ids raise TypeError: floating ids of any dtype (float64, float16...) are no integer ids and "
             "raise as well.",
             (TYPE_CHECK, 'if ids.dtype == torch.float32:\n'
                          '    raise TypeError(f"ids 应为整数张量，收到 {ids.dtype} (ids must be an integer tensor)")\n'))

fault.change("one_hot", "range_checked_in_ids_dtype",
             "范围检查在 ids 自己的 dtype 里做：uint8 的 ids 与 vocab_size=300 比较时 300 会回绕成 44，合法的 id 被拒。"
             "先把它们转成 Python 整数（int(...)）或 int64 再比较。",
             "the range was checked in the ids' own dtype: compared with uint8 ids, vocab_size=300 wraps to 44 and a valid "
             "id is refused. Compare them as Python ints (int(...)) or as int64.",
             ("(int(ids.min()) < 0 or int(ids.max()) >= vocab_size)", "(ids.min() < 0 or ids.max() >= vocab_size)"))


@fault("init_normal",
       "用 torch.randn(...) * std 另画了一批数再拷进去：这不是 normal_ 给出的数（逐位不同，float64 时相差更大）。"
       "用 weight.normal_(0, std, generator=generator) 或 torch.nn.init.normal_。",
       "another batch was drawn with torch.randn(...) * std and copied in: these are not normal_'s numbers (they "
       "differ in the last bits, and by more in float64). Use weight.normal_(0, std, generator=generator) or "
       "torch.nn.init.normal_.")
def randn_times_std(weight, std=0.02, generator=None):
    drawn = torch.randn(tuple(weight.shape), generator=generator) * std
    with torch.no_grad():
        weight.copy_(drawn)
    return weight

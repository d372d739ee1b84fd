"""Visible checks of chapter 2 (ids to vectors): properties you can test on your own code in
hero_transformer/embeddings.py.

Each ``judge_*`` function looks at outputs only and returns ``None`` when the property holds,
or a ``(中文, English)`` pair that says what is wrong; its words describe what your code did,
never an expected value.  The ``check_*`` functions run your code on small inputs of their own,
apply the judges and raise ``AssertionError`` with the message.  The autograder applies the
same judges to the outputs of your code on its hidden inputs (one check, two front ends).
"""

import torch

from .checks import TOLERANCE, _passed, _raise_if, show_tracebacks, visible_check  # noqa: F401

MODULE = "embeddings"


def _close(a, b):
    return a.shape == b.shape and torch.allclose(a.double(), b.double(), **TOLERANCE)


def _not_a_tensor(value, what_zh, what_en):
    if isinstance(value, torch.Tensor):
        return None
    return (f"{what_zh}应是张量，实际返回了 {type(value).__name__}。", f"{what_en} must be a tensor, got {type(value).__name__}.")


def _one_hot_rows(ids, vocab_size, dtype=torch.float64):
    """The one-hot rows of `ids`, written here with a comparison (a checking aid, not your answer)."""
    return (ids.unsqueeze(-1).long() == torch.arange(vocab_size, device=ids.device)).to(dtype)


# --- judges ----------------------------------------------------------------------------


def judge_raised(outcome, kind):
    """`outcome` is what a call on bad input did: 'raised <type>' or 'returned ... without raising'."""
    if outcome == f"raised {kind}":
        return None
    if isinstance(outcome, str) and outcome.startswith("raised "):
        got = outcome[len("raised "):]
        return (f"这个输入应当用一个明确的 {kind} 拒绝，你的代码抛出的却是 {got}"
                "（多半是 PyTorch 自己在索引越界时报的错）。请在查表之前先检查输入。",
                f"this input must be refused with a clear {kind}; your code raised {got} "
                "(most likely PyTorch's own indexing error). Check the input before using it.")
    return (f"这个输入应当用 {kind} 拒绝，你的代码却没有报错（{outcome}）。"
            "越界的 id 不能悄悄变成一行零、绕回表尾，浮点 id 也不能被悄悄截断成整数。",
            f"this input must be refused with {kind}, but your code did not raise ({outcome}). An out-of-range id "
            "must not silently become a zero row or wrap around to the end of the table, and float ids must not be "
            "silently truncated.")


def judge_one_hot_rows(ids, vocab_size, rows):
    """[..., V] float rows, each with a single 1 at column ids[...] and zeros elsewhere."""
    problem = _not_a_tensor(rows, "one-hot 结果", "the one-hot result")
    if problem:
        return problem
    shape = list(ids.shape) + [vocab_size]
    if list(rows.shape) != shape:
        return (f"one-hot 结果的形状是 {list(rows.shape)}；输入 ids 的形状是 {list(ids.shape)}、V = {vocab_size}，"
                "结果应在 ids 的形状后面加一根长度为 V 的轴（词表轴在最后，不在最前）。",
                f"the one-hot result has shape {list(rows.shape)}; for ids of shape {list(ids.shape)} and "
                f"V = {vocab_size} it must be the ids' shape plus a last axis of length V (the vocabulary axis comes "
                "last, not first).")
    if not rows.is_floating_point():
        return (f"one-hot 结果的 dtype 是 {rows.dtype}；它要和浮点的嵌入表相乘，应是浮点数（默认 float32）。",
                f"the one-hot result has dtype {rows.dtype}; it multiplies a float table, so it must be floating "
                "point (float32 by default).")
    if not torch.equal(rows.double(), _one_hot_rows(ids, vocab_size)):
        return ("每一行应恰好有一个 1，位于第 id 列（列从 0 数起），其余全是 0；你的结果不是这样。"
                "检查是不是把 id 当成了从 1 数起的列号。",
                "each row must hold a single 1, at column id (columns count from 0), and zeros elsewhere; yours does "
                "not. Check whether the id was used as a column number counted from 1.")
    return None


def judge_lookup_rows(ids, weight, out):
    """out[b, t] must be row ids[b, t] of the table: the same as one_hot(ids) @ W."""
    problem = _not_a_tensor(out, "查表结果", "the lookup")
    if problem:
        return problem
    shape = list(ids.shape) + [weight.shape[1]]
    if list(out.shape) != shape:
        return (f"查表结果的形状是 {list(out.shape)}；ids 的形状是 {list(ids.shape)}、表是 {list(weight.shape)}，"
                "结果应为 ids 的形状再加一根长度为 d 的轴（[B,T] 到 [B,T,d]）。",
                f"the lookup has shape {list(out.shape)}; for ids of shape {list(ids.shape)} and a table of shape "
                f"{list(weight.shape)} it must be the ids' shape plus an axis of length d ([B,T] to [B,T,d]).")
    product = _one_hot_rows(ids, weight.shape[0]) @ weight.detach().double()
    if not _close(out.detach(), product):
        return ("查表结果与 one_hot(ids) @ W 不一致：位置 (b, t) 上应是表的第 ids[b, t] 行（行，不是列）。",
                "the lookup differs from one_hot(ids) @ W: position (b, t) must hold row ids[b, t] of the table "
                "(a row, not a column).")
    return None


def judge_keeps_graph(out):
    """A lookup from a table that requires grad is part of the graph (the gradient reaches the table)."""
    if isinstance(out, torch.Tensor) and not out.requires_grad:
        return ("表需要梯度（requires_grad），查表结果却不在计算图里：查表不能放进 torch.no_grad()，"
                "也不能 detach，否则损失的梯度到不了表的行。",
                "the table requires grad but the lookup is not part of the graph: do not run the lookup under "
                "torch.no_grad() or detach it, or the loss's gradient never reaches the table's rows.")
    return None


def _grad_shape_problem(grad, vocab_size, width):
    problem = _not_a_tensor(grad, "嵌入表的梯度", "the table's gradient")
    if problem:
        return problem
    if list(grad.shape) != [vocab_size, width]:
        return (f"梯度的形状是 {list(grad.shape)}；表的梯度与表同形，应为 [V, d] = [{vocab_size}, {width}]。",
                f"the gradient has shape {list(grad.shape)}; a table's gradient has the table's shape, "
                f"[V, d] = [{vocab_size}, {width}].")
    return None


def judge_unused_rows_zero(ids, grad, vocab_size, width):
    """A row that no position read gets a gradient of exactly zero."""
    problem = _grad_shape_problem(grad, vocab_size, width)
    if problem:
        return problem
    unused = torch.ones(vocab_size, dtype=torch.bool)
    unused[ids.reshape(-1).long().cpu()] = False
    if grad.detach().cpu()[unused].count_nonzero().item():
        return ("没有被任何位置读到的行，梯度应恰好为 0：这一批的损失不依赖这些行。你的结果给它们也分了梯度。",
                "rows that no position read must get a gradient of exactly 0: this batch's loss does not depend on "
                "them. Your result gives them a gradient too.")
    return None


def judge_column_sums(upstream, grad, vocab_size, width):
    """Every upstream row lands in exactly one table row, so the columns sum to the upstream's sum."""
    problem = _grad_shape_problem(grad, vocab_size, width)
    if problem:
        return problem
    if not _close(grad.detach().double().sum(0), upstream.detach().double().reshape(-1, width).sum(0)):
        return ("梯度各列之和应等于上游梯度在所有位置上的和：每个位置的上游梯度恰好落进一行，重复的 id 要相加"
                "（不是覆盖，也不是平均）。",
                "the gradient's column sums must equal the upstream gradient summed over all positions: each "
                "position's upstream row lands in exactly one table row, and repeated ids add up (not overwrite, "
                "not average).")
    return None


def judge_in_place(values_after, returned_argument):
    """init_normal_ fills its argument (which then holds new values) and returns that same tensor."""
    if not returned_argument:
        return ("init_normal_ 应原地填充传入的张量，并返回这个张量本身（不是一个新张量）：模型里的参数对象"
                "必须还是原来那个。",
                "init_normal_ must fill the tensor it is given, in place, and return that very tensor (not a new "
                "one): the model's parameter object must stay the same object.")
    if isinstance(values_after, torch.Tensor) and not values_after.count_nonzero().item():
        return ("调用之后传入的张量仍然全是 0：要原地写进去（例如 weight.normal_(...)），而不是另建一个张量。",
                "after the call the tensor passed in is still all zeros: write into it in place (weight.normal_(...), "
                "say), rather than building another tensor.")
    return None


def judge_normal_scale(values, std):
    """A large N(0, std^2) sample: mean about 0, standard deviation about std (not sqrt(std))."""
    problem = _not_a_tensor(values, "初始化后的表", "the initialised table")
    if problem:
        return problem
    sample = values.detach().double().reshape(-1)
    mean, spread = sample.mean().item(), sample.std(unbiased=False).item()
    n = sample.numel()
    if abs(mean) > 5 * std / n ** 0.5:
        return (f"{n} 个样本的均值为 {mean:.4g}，离 0 太远：N(0, std²) 的均值是 0；std 不是均值"
                "（weight.normal_(std) 的第一个位置参数是 mean）。",
                f"the mean of {n} samples is {mean:.4g}, too far from 0: N(0, std^2) has mean 0, and std is not the "
                "mean (the first positional argument of weight.normal_ is mean).")
    if abs(spread / std - 1) > 0.05:
        return (f"{n} 个样本的标准差约为 {spread:.4g}，与要求的 std 不符。N(0, 0.02²) 的 0.02 是标准差，"
                "不是方差（把它当方差，标准差会变成 √0.02）；均匀分布也不是正态分布。",
                f"the standard deviation of {n} samples is about {spread:.4g}, not the std asked for. In N(0, 0.02^2) "
                "0.02 is the standard deviation, not the variance (read as a variance, the std becomes sqrt(0.02)); a "
                "uniform distribution is not a normal one either.")
    return None


def judge_same_draws(first, second):
    """Two calls with generators seeded alike give the same numbers, whatever the global RNG does."""
    if not torch.equal(first, second):
        return ("两次调用用了同样种子的 generator，全局随机数种子不同，结果却不一样：数字应当从传入的 generator 抽取"
                "（normal_(..., generator=generator)），而不是从全局随机数发生器。",
                "two calls with generators seeded alike (and different global seeds) gave different numbers: draw "
                "from the generator you are given (normal_(..., generator=generator)), not from the global RNG.")
    return None


# --- checks you run in the notebook ----------------------------------------------------


def _embeddings():
    from hero_transformer import embeddings

    return embeddings


def _outcome(call):
    try:
        out = call()
    except NotImplementedError:
        raise
    except Exception as exc:  # noqa: BLE001
        return f"raised {type(exc).__name__}"
    return f"returned {type(out).__name__} without raising"


@visible_check("one_hot", module=MODULE, target="one_hot")
def check_one_hot():
    embeddings = _embeddings()
    ids = torch.tensor([[2, 0, 4], [1, 4, 3]])  # T = 3, V = 5
    _raise_if(judge_one_hot_rows(ids, 5, embeddings.one_hot(ids, 5)))
    rows = embeddings.one_hot(ids.to(torch.int32), 5)
    _raise_if(judge_one_hot_rows(ids, 5, rows))
    if rows.dtype != torch.float32:
        raise AssertionError(f"默认 dtype 应为 torch.float32，实际是 {rows.dtype}。\n"
                             f"(the default dtype must be torch.float32, got {rows.dtype}.)")
    _raise_if(judge_raised(_outcome(lambda: embeddings.one_hot(torch.tensor([0.0, 1.0]), 5)), "TypeError"))
    _raise_if(judge_raised(_outcome(lambda: embeddings.one_hot(torch.tensor([0.0, 1.0], dtype=torch.float64), 5)),
                           "TypeError"))
    # any integer dtype, V past its range: uint8 ids against V = 300 (compared in uint8, 300 would wrap to 44)
    small = torch.tensor([50, 0, 255], dtype=torch.uint8)
    try:
        wide = embeddings.one_hot(small, 300)
    except ValueError:
        raise AssertionError("one_hot(uint8 的 ids [50, 0, 255], 300) 抛出了 ValueError，可这些 id 都在 [0, 300) 里："
                             "在 ids 自己的 dtype 里与 300 比较时，300 会回绕成 44。先转成 int64 或 Python 整数再比较。\n"
                             "(one_hot(uint8 ids [50, 0, 255], 300) raised ValueError, though every id lies in [0, 300): "
                             "compared in the ids' own dtype, 300 wraps to 44. Compare them as int64 or Python ints.)") from None
    _raise_if(judge_one_hot_rows(small.long(), 300, wide))
    _raise_if(judge_raised(_outcome(lambda: embeddings.one_hot(torch.tensor([0, 5]), 5)), "ValueError"))
    _raise_if(judge_raised(_outcome(lambda: embeddings.one_hot(torch.tensor([-1, 2]), 5)), "ValueError"))
    _passed("one_hot：形状 [2,3,5]、float32、每行一个 1 在第 id 列；浮点 id 报 TypeError，越界 id 报 ValueError")


@visible_check("embed", module=MODULE, target="embed")
def check_embed():
    embeddings = _embeddings()
    weight = torch.randn(6, 4, generator=torch.Generator().manual_seed(0))  # V = 6, d = 4
    ids = torch.tensor([[5, 0, 5], [2, 1, 3]])
    _raise_if(judge_lookup_rows(ids, weight, embeddings.embed(ids, weight)))
    square = torch.randn(3, 3, generator=torch.Generator().manual_seed(1))  # V = d: rows and columns fit alike
    square_ids = torch.tensor([[2, 0], [1, 2]])
    _raise_if(judge_lookup_rows(square_ids, square, embeddings.embed(square_ids, square)))
    _raise_if(judge_keeps_graph(embeddings.embed(ids, weight.clone().requires_grad_(True))))
    _raise_if(judge_raised(_outcome(lambda: embeddings.embed(torch.tensor([[0, 6]]), weight)), "ValueError"))
    _raise_if(judge_raised(_outcome(lambda: embeddings.embed(torch.tensor([[-1, 0]]), weight)), "ValueError"))
    _passed("embed：[2,3] 到 [2,3,4]，与 one_hot(ids) @ W 一致，留在计算图里；越界和负数 id 报 ValueError")


@visible_check("embedding_grad", module=MODULE, target="embedding_grad")
def check_embedding_grad():
    embeddings = _embeddings()
    gen = torch.Generator().manual_seed(0)
    ids = torch.tensor([[1, 3, 1], [4, 3, 1]])  # V = 6, d = 4: id 1 three times, rows 0, 2, 5 unused
    upstream = torch.randn(2, 3, 4, generator=gen)
    grad = embeddings.embedding_grad(ids, upstream, 6)
    _raise_if(judge_unused_rows_zero(ids, grad, 6, 4))
    _raise_if(judge_column_sums(upstream, grad, 6, 4))
    # what autograd gives for the loss sum(upstream * W[ids]), through plain indexing
    table = torch.zeros(6, 4, requires_grad=True)
    (table[ids] * upstream).sum().backward()
    if not _close(grad, table.grad):
        raise AssertionError("与 autograd 对损失 sum(upstream * W[ids]) 求出的梯度不一致：被读到的行应得到读它的"
                             "那些位置的上游梯度之和。\n(differs from the gradient autograd gives for "
                             "sum(upstream * W[ids]): a row read by several positions gets the sum of their "
                             "upstream rows.)")
    _passed("embedding_grad：形状 [6,4]，未用到的行恰为 0，重复的 id 相加，与 autograd 一致")


@visible_check("init_normal", module=MODULE, target="init_normal_")
def check_init_normal():
    embeddings = _embeddings()
    draws = []
    for global_seed in (1, 2):
        torch.manual_seed(global_seed)  # the global RNG differs between the two calls; the generator does not
        weight = torch.zeros(256, 64)
        out = embeddings.init_normal_(weight, generator=torch.Generator().manual_seed(7))
        _raise_if(judge_in_place(weight, out is weight))
        draws.append(weight.clone())
    _raise_if(judge_same_draws(*draws))
    _raise_if(judge_normal_scale(draws[0], embeddings.INIT_STD))
    wide = embeddings.init_normal_(torch.zeros(128, 32), std=0.5, generator=torch.Generator().manual_seed(8))
    _raise_if(judge_normal_scale(wide, 0.5))
    # normal_'s own numbers, bit for bit, in float32 and float64: another sampler of N(0, std^2) draws others
    for dtype in (torch.float32, torch.float64):
        mine = embeddings.init_normal_(torch.zeros(16, 8, dtype=dtype), std=0.2, generator=torch.Generator().manual_seed(5))
        theirs = torch.zeros(16, 8, dtype=dtype).normal_(0.0, 0.2, generator=torch.Generator().manual_seed(5))
        if not (isinstance(mine, torch.Tensor) and mine.dtype == dtype and torch.equal(mine, theirs)):
            raise AssertionError(f"init_normal_ 填入的数（{dtype}）与 weight.normal_(0, std, generator=generator) 给出的不是"
                                 "逐位相同：要用 normal_（或 torch.nn.init.normal_）自己的数，别的采样方法给的是别的数。\n"
                                 f"(init_normal_'s numbers ({dtype}) are not bit for bit those of weight.normal_(0, std, "
                                 "generator=generator): use normal_'s (or torch.nn.init.normal_'s) own numbers; another "
                                 "sampler draws others.)")
    parameter = torch.nn.Parameter(torch.zeros(3, 2))
    try:
        embeddings.init_normal_(parameter, generator=torch.Generator().manual_seed(9))
    except RuntimeError as exc:
        raise AssertionError("init_normal_ 对 nn.Parameter（requires_grad=True）报错了：原地写入要放进 "
                             f"torch.no_grad()。\n(init_normal_ failed on an nn.Parameter: {exc}; write in place "
                             "under torch.no_grad().)") from None
    _passed("init_normal_：原地填充并返回原张量，只用传入的 generator，均值约 0、标准差约为 std，可用于 Parameter")

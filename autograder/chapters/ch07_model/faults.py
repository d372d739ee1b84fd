"""Known misconceptions of chapter 7, each a change of the reference body or a faulty body.

One catalogue serves two purposes: diagnosis (a student's outputs that match a fault's on the
hidden cases get its misconception as feedback) and samples (`hero samples OUT` writes one
faulty submission per fault; the tests prove each loses points exactly on its exercise).

Most are `fault.change` edits of the reference body, defined in a copy of the target module's
namespace (model.py: torch, math, F, nn, LayerNorm, RESIDUAL_WRITERS, LMOutput; audit.py:
parameter_count) and bound to its live globals, so the probes' doubles set on the module (such
as audit.parameter_count) are the ones they call.  Whole functions remain where the body is
rewritten.
"""

from autograder.registry import catalogue

CATALOGUE, fault = catalogue("fault")


# --- model_forward (TransformerLM.forward) ---------------------------------------------

LOGITS = "logits = self.head(self.ln_f(hidden))"
EMBEDDED = "hidden = self.dropout(add_positions(tokens, self.position_embedding.weight, start=past_length))"

fault.change("model_forward", "reuse_first_block",
             "每一层都调用了第 0 个块：N 个块是 N 个互不共享参数的对象，要按顺序各用一次。",
             "every layer calls block 0: the N blocks are N objects with their own parameters, each used once, in "
             "order.",
             ("hidden, present = block(hidden, past, use_cache)",
              "hidden, present = self.blocks[0](hidden, past, use_cache)"))

fault.change("model_forward", "ln_f_skipped",
             "漏掉了最后的 LayerNorm（ln_f）：最后一个块的输出要先经 ln_f 归一化，再交给 head。",
             "the final LayerNorm (ln_f) is skipped: the last block's output goes through ln_f before the head.",
             (LOGITS, "logits = self.head(hidden)"))

fault.change("model_forward", "head_before_ln_f",
             "head 放在了 ln_f 前面：应为 logits = head(ln_f(h))，不是 ln_f(head(h))。",
             "the head comes before ln_f: logits = head(ln_f(h)), not ln_f(head(h)).",
             (LOGITS, "logits = self.ln_f(self.head(hidden))"))

fault.change("model_forward", "positions_from_zero",
             "有缓存时位置仍从 0 编号：新词元接在缓存之后，位置应从 past_length 开始（start=past_length）。",
             "with a cache the positions still start at 0: new tokens follow the cached ones, so positions start at "
             "past_length (start=past_length).",
             (", start=past_length)", ")"))

fault.change("model_forward", "past_length_from_heads",
             "past_length 读成了缓存键的第 1 根轴（头数 h）；键的形状是 [B, h, T_past, d_h]，已缓存的长度在第 2 根轴。",
             "past_length was read from axis 1 of a cached key (the heads, h); a key is [B, h, T_past, d_h], the "
             "cached length is axis 2.",
             ("past_key_values[0][0].shape[2]", "past_key_values[0][0].shape[1]"))

fault.change("model_forward", "same_cache_every_layer",
             "每一层都拿到了第 0 层的缓存：past_key_values[i] 属于第 i 个块，每个块缓存的是它自己的键和值。",
             "every layer gets layer 0's cache: past_key_values[i] belongs to block i, each block caches its own keys "
             "and values.",
             ("past_key_values[layer]", "past_key_values[0]"))

fault.change("model_forward", "last_present_only",
             "只留下了最后一个块的 present：past_key_values 应是每个块各一项的列表，按层的顺序。",
             "only the last block's present is kept: past_key_values is a list with one present per block, in layer "
             "order.",
             ("presents = [] if use_cache else None", "presents = None"),
             ("        presents.append(present)", "        presents = present"))

fault.change("model_forward", "presents_without_use_cache",
             "use_cache=False 时也返回了缓存列表；不要求缓存时 past_key_values 应为 None。",
             "a cache list is returned with use_cache=False too; without use_cache past_key_values is None.",
             ("presents = [] if use_cache else None", "presents = []"),
             ("    if use_cache:\n        presents.append(present)", "    presents.append(present)"))

fault.change("model_forward", "loss_summed",
             "损失对所有位置求了和：交叉熵应在 B·T 个位置上取平均，否则它随批量和长度变大。",
             "the loss adds up every position: the cross entropy is averaged over the B*T positions, otherwise it "
             "grows with the batch and the length.",
             ("targets.reshape(-1))", 'targets.reshape(-1), reduction="sum")'))

fault.change("model_forward", "zero_loss_without_targets",
             "没有 targets 时返回了 0 作为损失；没有目标就没有损失，loss 应为 None。",
             "a loss of 0 is returned without targets; with no targets there is no loss, and loss is None.",
             ("loss = None", "loss = torch.zeros((), device=logits.device)"))

fault.change("model_forward", "positions_looked_up_directly",
             "直接用 position_embedding 查位置，而不是第 3 章的 add_positions：越过 block_size 时得到的是 "
             "IndexError（或者静默出错），而不是写明长度的 ValueError。",
             "positions are looked up with position_embedding directly instead of chapter 3's add_positions: past "
             "block_size this gives an IndexError (or a silent wrong row), not the ValueError that names the length.",
             (EMBEDDED, "positions = torch.arange(past_length, past_length + idx.shape[1], device=idx.device)\n"
                        "hidden = self.dropout(tokens + self.position_embedding(positions))"))

fault.change("model_forward", "last_position_only",
             "只算了最后一个位置的 logits（那是生成时的用法）；forward 要给出每个位置的 logits [B, T, V]，损失也在所有位置上算。",
             "only the last position's logits are computed (what generation needs); the forward gives the logits of "
             "every position, [B, T, V], and the loss covers every position.",
             (LOGITS, "logits = self.head(self.ln_f(hidden[:, -1:]))"),
             ("targets.reshape(-1)", "targets[:, -1:].reshape(-1)"))

fault.change("model_forward", "tied_head",
             "输出层与词嵌入绑定了（logits = h·Eᵀ）；本课程的 head 不绑定，用它自己的权重 self.head。",
             "the output layer is tied to the token embedding (logits = h E^T); the course's head is untied: use "
             "self.head.",
             (LOGITS, "logits = self.ln_f(hidden) @ self.token_embedding.weight.T"))

fault.change("model_forward", "embedding_dropout_skipped",
             "漏掉了嵌入之后的 dropout（self.dropout）：词向量加上位置之后、进入第一个块之前，要经过它。",
             "the embedding dropout (self.dropout) is skipped: token plus position vectors pass through it before the "
             "first block.",
             (EMBEDDED, "hidden = add_positions(tokens, self.position_embedding.weight, start=past_length)"))


# --- init_weights ------------------------------------------------------------------------

DRAWN = "isinstance(owner, (nn.Linear, nn.Embedding)) and kind == \"weight\""
WRITER_STD = "std = residual_std if name.endswith(RESIDUAL_WRITERS) else INIT_STD"
BIASES = "        else:  # Linear and LayerNorm biases\n            parameter.zero_()"

fault.change("init_weights", "residual_std_sqrt_n",
             "残差写入矩阵的标准差用了 0.02/√N；每块有两条残差分支，N 块共 2N 次写入，应为 0.02/√(2N)。",
             "the residual writers' std is 0.02/sqrt(N); each block has two residual branches, 2N writes in all, so "
             "it is 0.02/sqrt(2N).",
             ("math.sqrt(2 * model.cfg.n_layers)", "math.sqrt(model.cfg.n_layers)"))

fault.change("init_weights", "every_matrix_scaled",
             "所有矩阵都按 1/√(2N) 缩小了；只有写入残差流的两个矩阵（attention.proj 与 feedforward.fc2）需要缩放，其余用 0.02。",
             "every matrix was scaled by 1/sqrt(2N); only the two that write into the residual stream (attention.proj "
             "and feedforward.fc2) are, the others use 0.02.",
             (WRITER_STD, "std = residual_std"))

fault.change("init_weights", "attention_all_scaled",
             "注意力的四个投影都按 1/√(2N) 缩小了（连 qkv 也缩）；写入残差流的只有输出投影 attention.proj 和 feedforward.fc2。",
             "all four attention projections were scaled by 1/sqrt(2N), qkv included; only the output projection "
             "attention.proj and feedforward.fc2 write into the residual stream.",
             ("name.endswith(RESIDUAL_WRITERS)",
              '(".attention." in name or name.endswith("feedforward.fc2.weight"))'))

fault.change("init_weights", "biases_not_zeroed",
             "偏置没有置 0：线性层的偏置和 LayerNorm 的 beta 都从 0 开始。",
             "the biases were not set to zero: linear biases and LayerNorm's beta start at 0.",
             ("parameter.zero_()", "pass  # the biases keep whatever they held"))

fault.change("init_weights", "layer_norm_drawn",
             "LayerNorm 的 gamma 也按 N(0, 0.02²) 抽了：gamma 应为 1、beta 应为 0，否则每个分支的输入一开始就被压到接近 0。",
             "LayerNorm's gamma was drawn from N(0, 0.02^2) too: gamma is one and beta zero, otherwise every branch's "
             "input starts squashed to nearly 0.",
             (DRAWN, 'kind == "weight"'))

fault.change("init_weights", "torch_layer_norm_class",
             "init_weights 之后 LayerNorm 的 gamma 是 0：每个 LayerNorm（本课程第 5 章的 model.LayerNorm，"
             "不是 nn.LayerNorm）的 gamma 应为 1、beta 为 0。",
             "after init_weights the LayerNorms' gamma are 0: every LayerNorm (the course's model.LayerNorm from "
             "chapter 5, not nn.LayerNorm) gets gamma = 1 and beta = 0.",
             ("isinstance(owner, LayerNorm)", "isinstance(owner, nn.LayerNorm)"), observed=True)

fault.change("init_weights", "variance_as_std",
             "把 0.02 当成了方差：N(0, 0.02²) 里 0.02 是标准差，std 参数就传 0.02（不是 √0.02）。",
             "0.02 was taken as the variance: in N(0, 0.02^2) 0.02 is the standard deviation, so pass std=0.02 (not "
             "sqrt(0.02)).",
             ("residual_std = INIT_STD /", "residual_std = math.sqrt(INIT_STD) /"),
             ("else INIT_STD", "else math.sqrt(INIT_STD)"))

fault.change("init_weights", "generator_ignored",
             "没有把 generator 传给 init_normal_：抽样用了全局随机状态，同一个随机种子的 generator 给不出同样的权重。",
             "the generator is not passed to init_normal_: the draws use the global random state, so generators "
             "seeded alike do not give the same weights.",
             ("init_normal_(parameter, std=std, generator=generator)", "init_normal_(parameter, std=std)"))

fault.change("init_weights", "embeddings_left_out",
             "只初始化了 nn.Linear：词嵌入和位置表（nn.Embedding）的权重同样要从 N(0, 0.02²) 抽。",
             "only nn.Linear layers were initialised: the token and position tables (nn.Embedding) are drawn from "
             "N(0, 0.02^2) too.",
             (DRAWN, 'isinstance(owner, nn.Linear) and kind == "weight"'),
             (BIASES, "        elif not isinstance(owner, nn.Embedding):  # the tables keep their values\n"
                      "            parameter.zero_()"))

fault.change("init_weights", "model_not_returned",
             "没有返回模型：init_weights 原地修改之后要 return model，才能写 lm = init_weights(TransformerLM(cfg), g)。",
             "the model is not returned: after working in place init_weights returns model, so that "
             "lm = init_weights(TransformerLM(cfg), g) works.",
             ("return model", "return None  # the work was done in place"))

fault.change("init_weights", "residual_writers_not_scaled",
             "写入残差流的两个矩阵（attention.proj 与 feedforward.fc2）没有按 1/√(2N) 缩小：它们的标准差是 "
             "0.02/√(2·n_layers)，其余矩阵才用 0.02。",
             "the two matrices that write into the residual stream (attention.proj and feedforward.fc2) were not "
             "scaled by 1/sqrt(2N): their std is 0.02/sqrt(2 * n_layers), only the other matrices use 0.02.",
             (WRITER_STD, "std = INIT_STD"), observed=True)

fault.change("init_weights", "residual_std_over_2n",
             "残差写入矩阵的标准差除以了 2N 而不是 √(2N)：2N 条分支的方差相加，标准差要按 1/√(2N) 缩小。",
             "the residual writers' std was divided by 2N instead of sqrt(2N): the variances of 2N branches add up, "
             "so the std is scaled by 1/sqrt(2N).",
             ("math.sqrt(2 * model.cfg.n_layers)", "(2 * model.cfg.n_layers)"))

fault.change("init_weights", "every_linear_scaled",
             "所有 nn.Linear 的权重都按 1/√(2N) 缩小了（只有嵌入表用 0.02）；只有写入残差流的 attention.proj 与 "
             "feedforward.fc2 需要缩放，qkv、fc1 和 head 都用 0.02。",
             "every nn.Linear weight was scaled by 1/sqrt(2N) (only the embedding tables got 0.02); only "
             "attention.proj and feedforward.fc2, which write into the residual stream, are scaled: qkv, fc1 and the "
             "head use 0.02.",
             (WRITER_STD, "std = residual_std if isinstance(owner, nn.Linear) else INIT_STD"))

fault.change("init_weights", "embeddings_std_one",
             "词嵌入和位置表按 nn.Embedding 自己的默认 N(0, 1) 抽了：它们和线性层一样用 std 0.02（INIT_STD）。",
             "the token and position tables were drawn from nn.Embedding's own default N(0, 1): like the linear "
             "layers they use std 0.02 (INIT_STD).",
             (WRITER_STD, "std = residual_std if name.endswith(RESIDUAL_WRITERS) else INIT_STD\n"
                          "            if isinstance(owner, nn.Embedding):\n"
                          "                std = 1.0  # nn.Embedding's default"))

fault.change("init_weights", "layer_norm_left_alone",
             "LayerNorm 的参数没有重置：每个 LayerNorm（本模块的类）都要 weight 置 1、bias 置 0，不能保留原来的值。",
             "the LayerNorm parameters were not reset: every LayerNorm (this module's class) gets weight one and bias "
             "zero, not whatever it held.",
             ("            parameter.fill_(1.0)", "            pass  # the norms keep their values"),
             ("        else:  # Linear and LayerNorm biases", "        elif not isinstance(owner, LayerNorm):"))

fault.change("init_weights", "linear_biases_drawn",
             "线性层的偏置也按 N(0, 0.02²) 抽了：只有权重要抽样，每个 nn.Linear 的偏置都置 0。",
             "the linear biases were drawn from N(0, 0.02^2) too: only the weights are drawn, every nn.Linear bias is "
             "zero.",
             (DRAWN, "isinstance(owner, (nn.Linear, nn.Embedding))"))


# --- frozen_parameters ---------------------------------------------------------------------

fault.change("frozen_parameters", "trainable_listed",
             "requires_grad 的含义弄反了：True 表示可以有梯度；冻结的是 requires_grad 为 False 的参数。",
             "requires_grad read the wrong way round: True means it may have a gradient; the frozen ones are those "
             "with requires_grad False.",
             ("if not parameter.requires_grad", "if parameter.requires_grad"))

fault.change("frozen_parameters", "grad_none_as_frozen",
             "把“grad 为 None”当成了“冻结”：图没有走到的可训练参数 grad 也是 None；问题一只看 requires_grad。",
             "'grad is None' was taken for 'frozen': a trainable parameter the graph never reached has grad None too; "
             "question 1 looks at requires_grad alone.",
             ("if not parameter.requires_grad", "if parameter.grad is None"))

fault.change("frozen_parameters", "frozen_tensors_returned",
             "返回的是参数张量本身，而不是它们的名字；三个问题都返回 named_parameters() 给出的名字。",
             "the parameter tensors themselves are returned, not their names; all three questions return the names "
             "named_parameters() gives.",
             ("return [name for", "return [parameter for"))


fault.change("frozen_parameters", "clears_gradients_first",
             "先调用了 model.zero_grad()（“清干净再查”）：列出的名字没错，但这一步的梯度被清掉了。这三个函数只读模型，"
             "不改它的梯度、requires_grad 或优化器的参数组。",
             "the function calls model.zero_grad() first (\"start clean\"): the names are right, but this step's "
             "gradients are gone. The three questions only read the model; they change no gradient, requires_grad or "
             "param group.",
             ("return [name for name, parameter in model.named_parameters() if not parameter.requires_grad]",
              "model.zero_grad()\n"
              "return [name for name, parameter in model.named_parameters() if not parameter.requires_grad]"))

fault.change("frozen_parameters", "sorted_by_name",
             "名字按字母排了序；规则是 named_parameters() 给出的顺序（参数注册的顺序）。",
             "the names are sorted alphabetically; the rule is the order named_parameters() gives (the order the "
             "parameters were registered in).",
             ("return [name for name, parameter in model.named_parameters() if not parameter.requires_grad]", "return sorted([name for name, parameter in model.named_parameters() if not parameter.requires_grad])"))

fault.change("frozen_parameters", "every_alias_listed",
             "共用的张量在它的每个别名下都列了一次（remove_duplicate=False）：一个参数只列一次，用 named_parameters() "
             "给它的那个名字。",
             "a shared tensor is listed under each of its aliases (remove_duplicate=False): a parameter is listed once, "
             "by the name named_parameters() gives it.",
             ("model.named_parameters()", "model.named_parameters(remove_duplicate=False)"))

# --- unreached_parameters ------------------------------------------------------------------

EMPTY_TEST = "(parameter.grad is None or not bool(parameter.grad.any()))"

fault.change("unreached_parameters", "none_only",
             "只查了 grad 是否为 None：图走到了、但这一批梯度全为 0 的参数同样没有学到东西，也要列出。",
             "only grad is None was checked: a parameter the graph reached whose gradient is all zero this batch "
             "learns nothing either, and is listed too.",
             (EMPTY_TEST, "parameter.grad is None"))

fault.change("unreached_parameters", "frozen_included",
             "把冻结的参数也列了进来（它们的 grad 当然是 None）；冻结是问题一的事，问题二只看可训练参数。",
             "frozen parameters are listed too (their grad is None, of course); frozen is question 1's business, "
             "question 2 looks at trainable parameters only.",
             ("parameter.requires_grad and (", "("))

fault.change("unreached_parameters", "any_zero_entry",
             "梯度里只要有一个 0 就算没有梯度：嵌入表这一批没读到的行梯度为 0 是正常的；要整个梯度全为 0 才算。",
             "one zero entry in the gradient was taken for no gradient: the rows of an embedding table this batch did "
             "not read have zero gradient, as they should; only an all-zero gradient counts.",
             ("parameter.grad.any()", "parameter.grad.all()"))


# the owners are collected once each: a rewritten loop, so written out whole
@fault("unreached_parameters", "列出的是层（模块）的名字，不是参数的名字；要给 named_parameters() 里的完整名字，如 spare.weight。",
       "layer (module) names are listed, not parameter names; give the full names of named_parameters(), such as "
       "spare.weight.")
def module_names(model):
    found = []
    for name, parameter in model.named_parameters():
        if parameter.requires_grad and (parameter.grad is None or not bool(parameter.grad.any())):
            owner = name.rpartition(".")[0]
            if owner not in found:
                found.append(owner)
    return found


# the cancelling setup tells it apart: a gradient whose entries sum to 0 without all being 0
fault.change("unreached_parameters", "gradient_sum_zero",
             "用 grad.sum() == 0 判断梯度全零：正负项可以相消，和为 0 的梯度不一定每一项都是 0；要看每一项（如 "
             "grad.any()）。",
             "grad.sum() == 0 was taken for an all-zero gradient: positive and negative entries can cancel, so a "
             "gradient that sums to 0 need not be zero everywhere; look at every entry (grad.any(), say).",
             ("not bool(parameter.grad.any())", "bool(parameter.grad.sum() == 0)"))


fault.change("unreached_parameters", "near_zero_as_zero",
             "把很小的梯度（绝对值小于 1e-6）也当成了“全为 0”：规则是每个元素都恰好为 0；一个很小但不为 0 的梯度说明"
             "这一批确实到达了这个参数。",
             "a tiny gradient (every entry below 1e-6 in size) is taken as all zero: the rule is every entry exactly 0; "
             "a tiny but non-zero gradient means this batch did reach the parameter.",
             ("not bool(parameter.grad.any())", "bool((parameter.grad.abs() < 1e-6).all())"))

fault.change("unreached_parameters", "gradients_cleared",
             "读完梯度后调用了 model.zero_grad()：这三个函数只读模型，不能改它的梯度、requires_grad 或优化器的参数组"
             "（清掉梯度，这一步的优化器就什么也学不到）。",
             "the function calls model.zero_grad() after reading the gradients: the three questions only read the "
             "model; they change no gradient, requires_grad or param group (cleared gradients leave this step's "
             "optimizer nothing to learn from).",
             ("return [name for name, parameter in model.named_parameters()\n"
              "        if parameter.requires_grad and (parameter.grad is None or not bool(parameter.grad.any()))]",
              "names = [name for name, parameter in model.named_parameters()\n"
              "         if parameter.requires_grad and (parameter.grad is None or not bool(parameter.grad.any()))]\n"
              "model.zero_grad()\n"
              "return names"))

# --- unoptimized_parameters ------------------------------------------------------------------

HELD = 'held = {id(parameter) for group in optimizer.param_groups for parameter in group["params"]}'

fault.change("unoptimized_parameters", "compared_by_value",
             "按数值比较参数（torch.equal）：两个数值相同的参数仍是两个参数，要按对象身份（is / id）比较。",
             "parameters were compared by value (torch.equal): two parameters with equal values are still two; "
             "compare by identity (is / id).",
             (HELD, 'held = [p for group in optimizer.param_groups for p in group["params"]]'),
             ("id(parameter) not in held",
              "not any(p.shape == parameter.shape and torch.equal(p, parameter) for p in held)"))

fault.change("unoptimized_parameters", "first_group_only",
             "只看了第一个参数组：优化器可以有多个 param_groups（比如带与不带权重衰减），每一组都要查。",
             "only the first param group was looked at: an optimizer may have several param_groups (with and without "
             "weight decay, say); every group counts.",
             (HELD, 'held = {id(parameter) for parameter in optimizer.param_groups[0]["params"]}'))

fault.change("unoptimized_parameters", "frozen_counted_unoptimized",
             "把冻结的参数也列了进来：冻结参数不在优化器里是对的；问题三只看可训练参数。",
             "frozen parameters are listed too: a frozen parameter may well stay out of the optimizer; question 3 "
             "looks at trainable parameters only.",
             ("if parameter.requires_grad and id(parameter) not in held", "if id(parameter) not in held"))

fault.change("unoptimized_parameters", "state_instead_of_groups",
             "查的是 optimizer.state：第一次 step() 之前它是空的；优化器持有哪些参数要看 param_groups。",
             "optimizer.state was looked at: it is empty before the first step(); which parameters the optimizer "
             "holds is in its param_groups.",
             ("id(parameter) not in held", "parameter not in optimizer.state"))


# one list per group, concatenated: a rewritten loop, so written out whole
@fault("unoptimized_parameters", "对每个参数组分别列出它没有的参数：一个参数只要在任何一组里就算被持有；结果要按 named_parameters() 的顺序、每个名字一次。",
       "each param group listed what it lacks: a parameter is held when any group holds it; the result lists each "
       "name once, in named_parameters() order.")
def per_group_lists(model, optimizer):
    found = []
    for group in optimizer.param_groups:
        held = {id(p) for p in group["params"]}
        found += [name for name, parameter in model.named_parameters() if parameter.requires_grad and id(parameter) not in held]
    return found


fault.change("unoptimized_parameters", "optimizer_zeroed",
             "先调用了 optimizer.zero_grad()：列出的名字没错，但优化器持有的参数的梯度被清掉了，这一步什么也学不到。"
             "这三个函数只读模型和优化器。",
             "the function calls optimizer.zero_grad() first: the names are right, but the gradients of every "
             "parameter the optimizer holds are gone, so this step learns nothing. The three questions only read the "
             "model and the optimizer.",
             ("held = {id(parameter)", "optimizer.zero_grad()\nheld = {id(parameter)"))

fault.change("unoptimized_parameters", "aliases_listed_as_unoptimized",
             "共用的张量在它的每个别名下都列了一次（remove_duplicate=False）：一个参数只列一次，用 named_parameters() "
             "给它的那个名字。",
             "a shared tensor is listed under each of its aliases (remove_duplicate=False): a parameter is listed once, "
             "by the name named_parameters() gives it.",
             ("model.named_parameters()", "model.named_parameters(remove_duplicate=False)"))

# --- ledger_gap ------------------------------------------------------------------------------

REGISTERED = "sum(parameter.numel() for parameter in model.parameters())"

fault.change("ledger_gap", "state_dict_counted",
             "数的是 state_dict()：它按名字列出每一项，复用的块对象每个名字都算一次，还带上了 buffer（比如因果掩码）；"
             "注册的参数要用 model.parameters() 数。",
             "state_dict() was counted: it lists every name, so a reused block counts once per name, and it holds buffers "
             "(a causal mask, say); count the registered parameters with model.parameters().",
             (REGISTERED, "sum(tensor.numel() for tensor in model.state_dict().values())"))

fault.change("ledger_gap", "duplicates_counted",
             "逐个模块数参数、没有去重（named_parameters(remove_duplicate=False)）：复用的块对象被数了 N 次，差距就看不见了。",
             "parameters were counted per module without removing duplicates (named_parameters(remove_duplicate=False)): the "
             "reused block is counted N times, and the gap disappears.",
             (REGISTERED, "sum(parameter.numel() for _, parameter in model.named_parameters(remove_duplicate=False))"))

fault.change("ledger_gap", "gap_reversed",
             "减反了：ledger_gap 是账本减去注册数，复用块时为正、多注册了参数时为负。",
             "subtracted the wrong way round: ledger_gap is the ledger minus the registered count, positive for a reused "
             "block and negative for extra parameters.",
             (f"return expected - {REGISTERED}", f"return {REGISTERED} - expected"))

fault.change("ledger_gap", "trainable_only_counted",
             "只数了 requires_grad 的参数：冻结的参数也是注册的参数，账本把它们算在内。",
             "only parameters with requires_grad were counted: frozen parameters are registered too, and the ledger "
             "counts them.",
             (REGISTERED, "sum(parameter.numel() for parameter in model.parameters() if parameter.requires_grad)"))

fault.change("ledger_gap", "ledger_arguments_swapped",
             "parameter_count 的参数顺序错了：它是 parameter_count(V, C, N, d, f)，即 vocab_size、block_size、"
             "n_layers、d_model、d_ff。",
             "parameter_count's arguments are in the wrong order: it is parameter_count(V, C, N, d, f), that is "
             "vocab_size, block_size, n_layers, d_model, d_ff.",
             ("cfg.n_layers, cfg.d_model", "cfg.d_model, cfg.n_layers"))


# --- gradients, range, the contract and the rules, from the independent set (issue 39) ----------

LOSS = "loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))"

fault.change("model_forward", "loss_from_item",
             "损失是用 .item() 取出的数重新建的张量：数值没错，但它不在计算图里，backward() 到不了任何参数，模型什么也学不到。",
             "the loss is a tensor rebuilt from a number taken out with .item(): its value is right, but it is not in "
             "the graph, so backward() reaches no parameter and the model learns nothing.",
             (LOSS, "loss = torch.tensor(F.cross_entropy(logits.reshape(-1, logits.size(-1)), "
                    "targets.reshape(-1)).item())"))

fault.change("model_forward", "log_of_softmax",
             "损失写成了 log(softmax(...))：logit 相差几百时 softmax 的概率在 float32 里下溢成 0，log 得到 -inf，损失成了 inf；"
             "交叉熵本身是有限的（用 F.cross_entropy 或 log_softmax）。",
             "the loss was written as log(softmax(...)): with logits hundreds apart, softmax's probabilities underflow "
             "to 0 in float32, the log is -inf and the loss inf, while the cross entropy itself is finite (use "
             "F.cross_entropy or log_softmax).",
             (LOSS, "loss = -torch.log(torch.softmax(logits, dim=-1).gather(-1, targets.unsqueeze(-1))).mean()"))

fault.change("model_forward", "presents_into_callers_cache",
             "新的 present 被追加进了调用者传入的 past_key_values 列表：调用者的缓存被改掉了。返回一个新列表。",
             "the new presents were appended to the caller's past_key_values list, which the caller's cache then "
             "holds: return a new list.",
             ("presents = [] if use_cache else None",
              "presents = (past_key_values if past_key_values is not None else []) if use_cache else None"))

fault.change("init_weights", "new_parameter_objects",
             "给模块换上了新的 nn.Parameter 对象：数值没错，但优化器里（以及绑定在一起的地方）还是旧的那些对象。"
             "原地填充模型自己的参数。",
             "the modules were given new nn.Parameter objects: the values are right, but an optimizer (and any tie) "
             "still holds the old ones. Fill the model's own parameters in place.",
             ("            init_normal_(parameter, std=std, generator=generator)",
              "            owner.weight = nn.Parameter(init_normal_(parameter.detach().clone(), std=std, "
              "generator=generator))"))

fault.change("unoptimized_parameters", "held_by_storage",
             "按存储地址（data_ptr()）判断参数在不在优化器里：共享内存的另一个张量对象（比如 .detach() 出来的）不是这个参数。"
             "按对象身份（is / id）判断。",
             "whether a parameter is held was judged by its storage address (data_ptr()): another tensor object sharing "
             "its memory (a .detach()ed one, say) is not the parameter. Judge by identity (is / id).",
             (HELD, 'held = {parameter.data_ptr() for group in optimizer.param_groups for parameter in group["params"]}'),
             ("id(parameter) not in held", "parameter.data_ptr() not in held"))

fault.change("unreached_parameters", "zero_norm",
             "用梯度的范数是否为 0 来判断：float32 里极小（约 1e-25）的各项平方下溢成 0，范数为 0，可每一项都不是 0。"
             "“全为 0”是指每个元素恰好为 0。",
             "a gradient's norm being 0 was the test: in float32 the squares of tiny entries (about 1e-25) underflow to "
             "0 and so does the norm, though no entry is 0. \"All zero\" means every entry is exactly 0.",
             (EMPTY_TEST, "(parameter.grad is None or parameter.grad.norm() == 0)"))


@fault("frozen_parameters",
       "名字取自 state_dict() 的键，按位置与 parameters() 配对：state_dict 还列出缓冲区（buffer），过了第一个缓冲区，"
       "名字就对不上参数了。名字用 named_parameters() 给出的。",
       "the names were state_dict()'s keys paired by position with parameters(): state_dict also lists buffers, so "
       "after the first buffer the names belong to other parameters. Take the names named_parameters() gives.")
def state_dict_names(model):
    return [name for name, parameter in zip(model.state_dict(), model.parameters()) if not parameter.requires_grad]

"""Known misconceptions of chapter 7, each written as a faulty exercise body.

One catalogue serves two purposes: diagnosis (a student's outputs that match a fault's on the
hidden cases get its misconception as feedback) and samples (`hero samples OUT` writes one
faulty submission per fault; the tests prove each loses points exactly on its exercise).

Each function has the signature of the exercise it replaces and uses only names its target
module has (model.py: torch, math, F, nn, LayerNorm, RESIDUAL_WRITERS and, imported before the
fences, embed, add_positions, init_normal_, INIT_STD; audit.py: torch, parameter_count); run
here by the grader, the module-level names come from _proxies.py.
"""

import math  # noqa: F401  (used by fault bodies)

import torch  # noqa: F401
import torch.nn.functional as F  # noqa: F401
from torch import nn  # noqa: F401

from autograder.registry import catalogue

from ._proxies import (INIT_STD, RESIDUAL_WRITERS, LayerNorm, LMOutput, add_positions, embed, init_normal_,  # noqa: F401
                       parameter_count)

CATALOGUE, fault = catalogue("fault")


# --- model_forward (TransformerLM.forward) ---------------------------------------------


@fault("model_forward", "每一层都调用了第 0 个块：N 个块是 N 个互不共享参数的对象，要按顺序各用一次。",
       "every layer calls block 0: the N blocks are N objects with their own parameters, each used once, in order.")
def reuse_first_block(self, idx, targets=None, past_key_values=None, use_cache=False):
    past_length = 0 if past_key_values is None else past_key_values[0][0].shape[2]
    hidden = self.dropout(add_positions(embed(idx, self.token_embedding.weight), self.position_embedding.weight,
                                        start=past_length))
    presents = [] if use_cache else None
    for layer in range(len(self.blocks)):
        past = None if past_key_values is None else past_key_values[layer]
        hidden, present = self.blocks[0](hidden, past, use_cache)
        if use_cache:
            presents.append(present)
    logits = self.head(self.ln_f(hidden))
    loss = None
    if targets is not None:
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))
    return LMOutput(logits, loss, presents)


@fault("model_forward", "漏掉了最后的 LayerNorm（ln_f）：最后一个块的输出要先经 ln_f 归一化，再交给 head。",
       "the final LayerNorm (ln_f) is skipped: the last block's output goes through ln_f before the head.")
def ln_f_skipped(self, idx, targets=None, past_key_values=None, use_cache=False):
    past_length = 0 if past_key_values is None else past_key_values[0][0].shape[2]
    hidden = self.dropout(add_positions(embed(idx, self.token_embedding.weight), self.position_embedding.weight,
                                        start=past_length))
    presents = [] if use_cache else None
    for layer, block in enumerate(self.blocks):
        hidden, present = block(hidden, None if past_key_values is None else past_key_values[layer], use_cache)
        if use_cache:
            presents.append(present)
    logits = self.head(hidden)
    loss = None if targets is None else F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))
    return LMOutput(logits, loss, presents)


@fault("model_forward", "head 放在了 ln_f 前面：应为 logits = head(ln_f(h))，不是 ln_f(head(h))。",
       "the head comes before ln_f: logits = head(ln_f(h)), not ln_f(head(h)).")
def head_before_ln_f(self, idx, targets=None, past_key_values=None, use_cache=False):
    past_length = 0 if past_key_values is None else past_key_values[0][0].shape[2]
    hidden = self.dropout(add_positions(embed(idx, self.token_embedding.weight), self.position_embedding.weight,
                                        start=past_length))
    presents = [] if use_cache else None
    for layer, block in enumerate(self.blocks):
        hidden, present = block(hidden, None if past_key_values is None else past_key_values[layer], use_cache)
        if use_cache:
            presents.append(present)
    logits = self.ln_f(self.head(hidden))
    loss = None if targets is None else F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))
    return LMOutput(logits, loss, presents)


@fault("model_forward", "有缓存时位置仍从 0 编号：新词元接在缓存之后，位置应从 past_length 开始（start=past_length）。",
       "with a cache the positions still start at 0: new tokens follow the cached ones, so positions start at "
       "past_length (start=past_length).")
def positions_from_zero(self, idx, targets=None, past_key_values=None, use_cache=False):
    hidden = self.dropout(add_positions(embed(idx, self.token_embedding.weight), self.position_embedding.weight))
    presents = [] if use_cache else None
    for layer, block in enumerate(self.blocks):
        hidden, present = block(hidden, None if past_key_values is None else past_key_values[layer], use_cache)
        if use_cache:
            presents.append(present)
    logits = self.head(self.ln_f(hidden))
    loss = None if targets is None else F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))
    return LMOutput(logits, loss, presents)


@fault("model_forward", "past_length 读成了缓存键的第 1 根轴（头数 h）；键的形状是 [B, h, T_past, d_h]，已缓存的长度在第 2 根轴。",
       "past_length was read from axis 1 of a cached key (the heads, h); a key is [B, h, T_past, d_h], the cached "
       "length is axis 2.")
def past_length_from_heads(self, idx, targets=None, past_key_values=None, use_cache=False):
    past_length = 0 if past_key_values is None else past_key_values[0][0].shape[1]
    hidden = self.dropout(add_positions(embed(idx, self.token_embedding.weight), self.position_embedding.weight,
                                        start=past_length))
    presents = [] if use_cache else None
    for layer, block in enumerate(self.blocks):
        hidden, present = block(hidden, None if past_key_values is None else past_key_values[layer], use_cache)
        if use_cache:
            presents.append(present)
    logits = self.head(self.ln_f(hidden))
    loss = None if targets is None else F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))
    return LMOutput(logits, loss, presents)


@fault("model_forward", "每一层都拿到了第 0 层的缓存：past_key_values[i] 属于第 i 个块，每个块缓存的是它自己的键和值。",
       "every layer gets layer 0's cache: past_key_values[i] belongs to block i, each block caches its own keys "
       "and values.")
def same_cache_every_layer(self, idx, targets=None, past_key_values=None, use_cache=False):
    past_length = 0 if past_key_values is None else past_key_values[0][0].shape[2]
    hidden = self.dropout(add_positions(embed(idx, self.token_embedding.weight), self.position_embedding.weight,
                                        start=past_length))
    presents = [] if use_cache else None
    for block in self.blocks:
        hidden, present = block(hidden, None if past_key_values is None else past_key_values[0], use_cache)
        if use_cache:
            presents.append(present)
    logits = self.head(self.ln_f(hidden))
    loss = None if targets is None else F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))
    return LMOutput(logits, loss, presents)


@fault("model_forward", "只留下了最后一个块的 present：past_key_values 应是每个块各一项的列表，按层的顺序。",
       "only the last block's present is kept: past_key_values is a list with one present per block, in layer "
       "order.")
def last_present_only(self, idx, targets=None, past_key_values=None, use_cache=False):
    past_length = 0 if past_key_values is None else past_key_values[0][0].shape[2]
    hidden = self.dropout(add_positions(embed(idx, self.token_embedding.weight), self.position_embedding.weight,
                                        start=past_length))
    presents = None
    for layer, block in enumerate(self.blocks):
        hidden, present = block(hidden, None if past_key_values is None else past_key_values[layer], use_cache)
        presents = present
    logits = self.head(self.ln_f(hidden))
    loss = None if targets is None else F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))
    return LMOutput(logits, loss, presents)


@fault("model_forward", "use_cache=False 时也返回了缓存列表；不要求缓存时 past_key_values 应为 None。",
       "a cache list is returned with use_cache=False too; without use_cache past_key_values is None.")
def presents_without_use_cache(self, idx, targets=None, past_key_values=None, use_cache=False):
    past_length = 0 if past_key_values is None else past_key_values[0][0].shape[2]
    hidden = self.dropout(add_positions(embed(idx, self.token_embedding.weight), self.position_embedding.weight,
                                        start=past_length))
    presents = []
    for layer, block in enumerate(self.blocks):
        hidden, present = block(hidden, None if past_key_values is None else past_key_values[layer], use_cache)
        presents.append(present)
    logits = self.head(self.ln_f(hidden))
    loss = None if targets is None else F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))
    return LMOutput(logits, loss, presents)


@fault("model_forward", "损失对所有位置求了和：交叉熵应在 B·T 个位置上取平均，否则它随批量和长度变大。",
       "the loss adds up every position: the cross entropy is averaged over the B*T positions, otherwise it grows "
       "with the batch and the length.")
def loss_summed(self, idx, targets=None, past_key_values=None, use_cache=False):
    past_length = 0 if past_key_values is None else past_key_values[0][0].shape[2]
    hidden = self.dropout(add_positions(embed(idx, self.token_embedding.weight), self.position_embedding.weight,
                                        start=past_length))
    presents = [] if use_cache else None
    for layer, block in enumerate(self.blocks):
        hidden, present = block(hidden, None if past_key_values is None else past_key_values[layer], use_cache)
        if use_cache:
            presents.append(present)
    logits = self.head(self.ln_f(hidden))
    loss = None if targets is None else F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1),
                                                        reduction="sum")
    return LMOutput(logits, loss, presents)


@fault("model_forward", "没有 targets 时返回了 0 作为损失；没有目标就没有损失，loss 应为 None。",
       "a loss of 0 is returned without targets; with no targets there is no loss, and loss is None.")
def zero_loss_without_targets(self, idx, targets=None, past_key_values=None, use_cache=False):
    past_length = 0 if past_key_values is None else past_key_values[0][0].shape[2]
    hidden = self.dropout(add_positions(embed(idx, self.token_embedding.weight), self.position_embedding.weight,
                                        start=past_length))
    presents = [] if use_cache else None
    for layer, block in enumerate(self.blocks):
        hidden, present = block(hidden, None if past_key_values is None else past_key_values[layer], use_cache)
        if use_cache:
            presents.append(present)
    logits = self.head(self.ln_f(hidden))
    loss = torch.zeros((), device=logits.device) if targets is None else \
        F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))
    return LMOutput(logits, loss, presents)


@fault("model_forward", "直接用 position_embedding 查位置，而不是第 3 章的 add_positions：越过 block_size 时得到的是 "
       "IndexError（或者静默出错），而不是写明长度的 ValueError。",
       "positions are looked up with position_embedding directly instead of chapter 3's add_positions: past "
       "block_size this gives an IndexError (or a silent wrong row), not the ValueError that names the length.")
def positions_looked_up_directly(self, idx, targets=None, past_key_values=None, use_cache=False):
    past_length = 0 if past_key_values is None else past_key_values[0][0].shape[2]
    positions = torch.arange(past_length, past_length + idx.shape[1], device=idx.device)
    hidden = self.dropout(embed(idx, self.token_embedding.weight) + self.position_embedding(positions))
    presents = [] if use_cache else None
    for layer, block in enumerate(self.blocks):
        hidden, present = block(hidden, None if past_key_values is None else past_key_values[layer], use_cache)
        if use_cache:
            presents.append(present)
    logits = self.head(self.ln_f(hidden))
    loss = None if targets is None else F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))
    return LMOutput(logits, loss, presents)


@fault("model_forward", "只算了最后一个位置的 logits（那是生成时的用法）；forward 要给出每个位置的 logits [B, T, V]，损失也在所有位置上算。",
       "only the last position's logits are computed (what generation needs); the forward gives the logits of "
       "every position, [B, T, V], and the loss covers every position.")
def last_position_only(self, idx, targets=None, past_key_values=None, use_cache=False):
    past_length = 0 if past_key_values is None else past_key_values[0][0].shape[2]
    hidden = self.dropout(add_positions(embed(idx, self.token_embedding.weight), self.position_embedding.weight,
                                        start=past_length))
    presents = [] if use_cache else None
    for layer, block in enumerate(self.blocks):
        hidden, present = block(hidden, None if past_key_values is None else past_key_values[layer], use_cache)
        if use_cache:
            presents.append(present)
    logits = self.head(self.ln_f(hidden[:, -1:]))
    loss = None if targets is None else F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets[:, -1:].reshape(-1))
    return LMOutput(logits, loss, presents)


@fault("model_forward", "输出层与词嵌入绑定了（logits = h·Eᵀ）；本课程的 head 不绑定，用它自己的权重 self.head。",
       "the output layer is tied to the token embedding (logits = h E^T); the course's head is untied: use self.head.")
def tied_head(self, idx, targets=None, past_key_values=None, use_cache=False):
    past_length = 0 if past_key_values is None else past_key_values[0][0].shape[2]
    hidden = self.dropout(add_positions(embed(idx, self.token_embedding.weight), self.position_embedding.weight,
                                        start=past_length))
    presents = [] if use_cache else None
    for layer, block in enumerate(self.blocks):
        hidden, present = block(hidden, None if past_key_values is None else past_key_values[layer], use_cache)
        if use_cache:
            presents.append(present)
    logits = self.ln_f(hidden) @ self.token_embedding.weight.T
    loss = None if targets is None else F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))
    return LMOutput(logits, loss, presents)


@fault("model_forward", "漏掉了嵌入之后的 dropout（self.dropout）：词向量加上位置之后、进入第一个块之前，要经过它。",
       "the embedding dropout (self.dropout) is skipped: token plus position vectors pass through it before the "
       "first block.")
def embedding_dropout_skipped(self, idx, targets=None, past_key_values=None, use_cache=False):
    past_length = 0 if past_key_values is None else past_key_values[0][0].shape[2]
    hidden = add_positions(embed(idx, self.token_embedding.weight), self.position_embedding.weight, start=past_length)
    presents = [] if use_cache else None
    for layer, block in enumerate(self.blocks):
        hidden, present = block(hidden, None if past_key_values is None else past_key_values[layer], use_cache)
        if use_cache:
            presents.append(present)
    logits = self.head(self.ln_f(hidden))
    loss = None if targets is None else F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))
    return LMOutput(logits, loss, presents)


# --- init_weights ------------------------------------------------------------------------


@fault("init_weights", "残差写入矩阵的标准差用了 0.02/√N；每块有两条残差分支，N 块共 2N 次写入，应为 0.02/√(2N)。",
       "the residual writers' std is 0.02/sqrt(N); each block has two residual branches, 2N writes in all, so it "
       "is 0.02/sqrt(2N).")
def residual_std_sqrt_n(model, generator=None):
    residual_std = INIT_STD / math.sqrt(model.cfg.n_layers)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            owner_name, _, kind = name.rpartition(".")
            owner = model.get_submodule(owner_name)
            if isinstance(owner, (nn.Linear, nn.Embedding)) and kind == "weight":
                std = residual_std if name.endswith(RESIDUAL_WRITERS) else INIT_STD
                init_normal_(parameter, std=std, generator=generator)
            elif isinstance(owner, LayerNorm) and kind == "weight":
                parameter.fill_(1.0)
            else:
                parameter.zero_()
    return model


@fault("init_weights", "所有矩阵都按 1/√(2N) 缩小了；只有写入残差流的两个矩阵（attention.proj 与 feedforward.fc2）需要缩放，其余用 0.02。",
       "every matrix was scaled by 1/sqrt(2N); only the two that write into the residual stream (attention.proj and "
       "feedforward.fc2) are, the others use 0.02.")
def every_matrix_scaled(model, generator=None):
    residual_std = INIT_STD / math.sqrt(2 * model.cfg.n_layers)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            owner_name, _, kind = name.rpartition(".")
            owner = model.get_submodule(owner_name)
            if isinstance(owner, (nn.Linear, nn.Embedding)) and kind == "weight":
                init_normal_(parameter, std=residual_std, generator=generator)
            elif isinstance(owner, LayerNorm) and kind == "weight":
                parameter.fill_(1.0)
            else:
                parameter.zero_()
    return model


@fault("init_weights", "注意力的四个投影都按 1/√(2N) 缩小了（连 qkv 也缩）；写入残差流的只有输出投影 attention.proj 和 feedforward.fc2。",
       "all four attention projections were scaled by 1/sqrt(2N), qkv included; only the output projection "
       "attention.proj and feedforward.fc2 write into the residual stream.")
def attention_all_scaled(model, generator=None):
    residual_std = INIT_STD / math.sqrt(2 * model.cfg.n_layers)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            owner_name, _, kind = name.rpartition(".")
            owner = model.get_submodule(owner_name)
            if isinstance(owner, (nn.Linear, nn.Embedding)) and kind == "weight":
                scaled = ".attention." in name or name.endswith("feedforward.fc2.weight")
                init_normal_(parameter, std=residual_std if scaled else INIT_STD, generator=generator)
            elif isinstance(owner, LayerNorm) and kind == "weight":
                parameter.fill_(1.0)
            else:
                parameter.zero_()
    return model


@fault("init_weights", "偏置没有置 0：线性层的偏置和 LayerNorm 的 beta 都从 0 开始。",
       "the biases were not set to zero: linear biases and LayerNorm's beta start at 0.")
def biases_not_zeroed(model, generator=None):
    residual_std = INIT_STD / math.sqrt(2 * model.cfg.n_layers)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            owner_name, _, kind = name.rpartition(".")
            owner = model.get_submodule(owner_name)
            if isinstance(owner, (nn.Linear, nn.Embedding)) and kind == "weight":
                std = residual_std if name.endswith(RESIDUAL_WRITERS) else INIT_STD
                init_normal_(parameter, std=std, generator=generator)
            elif isinstance(owner, LayerNorm) and kind == "weight":
                parameter.fill_(1.0)
    return model


@fault("init_weights", "LayerNorm 的 gamma 也按 N(0, 0.02²) 抽了：gamma 应为 1、beta 应为 0，否则每个分支的输入一开始就被压到接近 0。",
       "LayerNorm's gamma was drawn from N(0, 0.02^2) too: gamma is one and beta zero, otherwise every branch's "
       "input starts squashed to nearly 0.")
def layer_norm_drawn(model, generator=None):
    residual_std = INIT_STD / math.sqrt(2 * model.cfg.n_layers)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if name.endswith(".weight"):
                std = residual_std if name.endswith(RESIDUAL_WRITERS) else INIT_STD
                init_normal_(parameter, std=std, generator=generator)
            else:
                parameter.zero_()
    return model


@fault("init_weights", "用 isinstance(m, nn.LayerNorm) 找归一化层：本课程的 LayerNorm 是 model.LayerNorm（第 5 章自己写的），"
       "它不是 nn.LayerNorm，于是 gamma 被当成偏置置成了 0。",
       "the norms were found with isinstance(m, nn.LayerNorm): the course's LayerNorm is model.LayerNorm (written in "
       "chapter 5), not nn.LayerNorm, so gamma was zeroed like a bias.")
def torch_layer_norm_class(model, generator=None):
    residual_std = INIT_STD / math.sqrt(2 * model.cfg.n_layers)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            owner_name, _, kind = name.rpartition(".")
            owner = model.get_submodule(owner_name)
            if isinstance(owner, (nn.Linear, nn.Embedding)) and kind == "weight":
                std = residual_std if name.endswith(RESIDUAL_WRITERS) else INIT_STD
                init_normal_(parameter, std=std, generator=generator)
            elif isinstance(owner, nn.LayerNorm) and kind == "weight":
                parameter.fill_(1.0)
            else:
                parameter.zero_()
    return model


@fault("init_weights", "把 0.02 当成了方差：N(0, 0.02²) 里 0.02 是标准差，std 参数就传 0.02（不是 √0.02）。",
       "0.02 was taken as the variance: in N(0, 0.02^2) 0.02 is the standard deviation, so pass std=0.02 (not "
       "sqrt(0.02)).")
def variance_as_std(model, generator=None):
    residual_std = math.sqrt(INIT_STD) / math.sqrt(2 * model.cfg.n_layers)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            owner_name, _, kind = name.rpartition(".")
            owner = model.get_submodule(owner_name)
            if isinstance(owner, (nn.Linear, nn.Embedding)) and kind == "weight":
                std = residual_std if name.endswith(RESIDUAL_WRITERS) else math.sqrt(INIT_STD)
                init_normal_(parameter, std=std, generator=generator)
            elif isinstance(owner, LayerNorm) and kind == "weight":
                parameter.fill_(1.0)
            else:
                parameter.zero_()
    return model


@fault("init_weights", "没有把 generator 传给 init_normal_：抽样用了全局随机状态，同一个种子的 generator 给不出同样的权重。",
       "the generator is not passed to init_normal_: the draws use the global random state, so generators seeded "
       "alike do not give the same weights.")
def generator_ignored(model, generator=None):
    residual_std = INIT_STD / math.sqrt(2 * model.cfg.n_layers)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            owner_name, _, kind = name.rpartition(".")
            owner = model.get_submodule(owner_name)
            if isinstance(owner, (nn.Linear, nn.Embedding)) and kind == "weight":
                std = residual_std if name.endswith(RESIDUAL_WRITERS) else INIT_STD
                init_normal_(parameter, std=std)
            elif isinstance(owner, LayerNorm) and kind == "weight":
                parameter.fill_(1.0)
            else:
                parameter.zero_()
    return model


@fault("init_weights", "只初始化了 nn.Linear：词嵌入和位置表（nn.Embedding）的权重同样要从 N(0, 0.02²) 抽。",
       "only nn.Linear layers were initialised: the token and position tables (nn.Embedding) are drawn from "
       "N(0, 0.02^2) too.")
def embeddings_left_out(model, generator=None):
    residual_std = INIT_STD / math.sqrt(2 * model.cfg.n_layers)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            owner_name, _, kind = name.rpartition(".")
            owner = model.get_submodule(owner_name)
            if isinstance(owner, nn.Linear) and kind == "weight":
                std = residual_std if name.endswith(RESIDUAL_WRITERS) else INIT_STD
                init_normal_(parameter, std=std, generator=generator)
            elif isinstance(owner, LayerNorm) and kind == "weight":
                parameter.fill_(1.0)
            elif not isinstance(owner, nn.Embedding):
                parameter.zero_()
    return model


@fault("init_weights", "没有返回模型：init_weights 原地修改之后要 return model，才能写 lm = init_weights(TransformerLM(cfg), g)。",
       "the model is not returned: after working in place init_weights returns model, so that "
       "lm = init_weights(TransformerLM(cfg), g) works.")
def model_not_returned(model, generator=None):
    residual_std = INIT_STD / math.sqrt(2 * model.cfg.n_layers)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            owner_name, _, kind = name.rpartition(".")
            owner = model.get_submodule(owner_name)
            if isinstance(owner, (nn.Linear, nn.Embedding)) and kind == "weight":
                std = residual_std if name.endswith(RESIDUAL_WRITERS) else INIT_STD
                init_normal_(parameter, std=std, generator=generator)
            elif isinstance(owner, LayerNorm) and kind == "weight":
                parameter.fill_(1.0)
            else:
                parameter.zero_()


# --- frozen_parameters ---------------------------------------------------------------------


@fault("frozen_parameters", "requires_grad 的含义弄反了：True 表示可以有梯度；冻结的是 requires_grad 为 False 的参数。",
       "requires_grad read the wrong way round: True means it may have a gradient; the frozen ones are those with "
       "requires_grad False.")
def trainable_listed(model):
    return [name for name, parameter in model.named_parameters() if parameter.requires_grad]


@fault("frozen_parameters", "把“grad 为 None”当成了“冻结”：图没有走到的可训练参数 grad 也是 None；问题一只看 requires_grad。",
       "'grad is None' was taken for 'frozen': a trainable parameter the graph never reached has grad None too; "
       "question 1 looks at requires_grad alone.")
def grad_none_as_frozen(model):
    return [name for name, parameter in model.named_parameters() if parameter.grad is None]


@fault("frozen_parameters", "返回的是参数张量本身，而不是它们的名字；三个问题都返回 named_parameters() 给出的名字。",
       "the parameter tensors themselves are returned, not their names; all three questions return the names "
       "named_parameters() gives.")
def frozen_tensors_returned(model):
    return [parameter for _, parameter in model.named_parameters() if not parameter.requires_grad]


# --- unreached_parameters ------------------------------------------------------------------


@fault("unreached_parameters", "只查了 grad 是否为 None：图走到了、但这一批梯度全为 0 的参数同样没有学到东西，也要列出。",
       "only grad is None was checked: a parameter the graph reached whose gradient is all zero this batch learns "
       "nothing either, and is listed too.")
def none_only(model):
    return [name for name, parameter in model.named_parameters() if parameter.requires_grad and parameter.grad is None]


@fault("unreached_parameters", "把冻结的参数也列了进来（它们的 grad 当然是 None）；冻结是问题一的事，问题二只看可训练参数。",
       "frozen parameters are listed too (their grad is None, of course); frozen is question 1's business, question "
       "2 looks at trainable parameters only.")
def frozen_included(model):
    return [name for name, parameter in model.named_parameters()
            if parameter.grad is None or not bool(parameter.grad.any())]


@fault("unreached_parameters", "梯度里只要有一个 0 就算没有梯度：嵌入表这一批没读到的行梯度为 0 是正常的；要整个梯度全为 0 才算。",
       "one zero entry in the gradient was taken for no gradient: the rows of an embedding table this batch did "
       "not read have zero gradient, as they should; only an all-zero gradient counts.")
def any_zero_entry(model):
    return [name for name, parameter in model.named_parameters()
            if parameter.requires_grad and (parameter.grad is None or not bool(parameter.grad.all()))]


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


# --- unoptimized_parameters ------------------------------------------------------------------


@fault("unoptimized_parameters", "按数值比较参数（torch.equal）：两个数值相同的参数仍是两个参数，要按对象身份（is / id）比较。",
       "parameters were compared by value (torch.equal): two parameters with equal values are still two; compare "
       "by identity (is / id).")
def compared_by_value(model, optimizer):
    held = [p for group in optimizer.param_groups for p in group["params"]]
    return [name for name, parameter in model.named_parameters() if parameter.requires_grad
            and not any(p.shape == parameter.shape and torch.equal(p, parameter) for p in held)]


@fault("unoptimized_parameters", "只看了第一个参数组：优化器可以有多个 param_groups（比如带与不带权重衰减），每一组都要查。",
       "only the first param group was looked at: an optimizer may have several param_groups (with and without "
       "weight decay, say); every group counts.")
def first_group_only(model, optimizer):
    held = {id(p) for p in optimizer.param_groups[0]["params"]}
    return [name for name, parameter in model.named_parameters() if parameter.requires_grad and id(parameter) not in held]


@fault("unoptimized_parameters", "把冻结的参数也列了进来：冻结参数不在优化器里是对的；问题三只看可训练参数。",
       "frozen parameters are listed too: a frozen parameter may well stay out of the optimizer; question 3 looks "
       "at trainable parameters only.")
def frozen_counted_unoptimized(model, optimizer):
    held = {id(p) for group in optimizer.param_groups for p in group["params"]}
    return [name for name, parameter in model.named_parameters() if id(parameter) not in held]


@fault("unoptimized_parameters", "查的是 optimizer.state：第一次 step() 之前它是空的；优化器持有哪些参数要看 param_groups。",
       "optimizer.state was looked at: it is empty before the first step(); which parameters the optimizer holds "
       "is in its param_groups.")
def state_instead_of_groups(model, optimizer):
    return [name for name, parameter in model.named_parameters()
            if parameter.requires_grad and parameter not in optimizer.state]


@fault("unoptimized_parameters", "对每个参数组分别列出它没有的参数：一个参数只要在任何一组里就算被持有；结果要按 named_parameters() 的顺序、每个名字一次。",
       "each param group listed what it lacks: a parameter is held when any group holds it; the result lists each "
       "name once, in named_parameters() order.")
def per_group_lists(model, optimizer):
    found = []
    for group in optimizer.param_groups:
        held = {id(p) for p in group["params"]}
        found += [name for name, parameter in model.named_parameters() if parameter.requires_grad and id(parameter) not in held]
    return found


# --- ledger_gap ------------------------------------------------------------------------------


@fault("ledger_gap", "数的是 state_dict()：它按名字列出每一项，复用的块对象每个名字都算一次，还带上了 buffer（比如因果掩码）；"
       "注册的参数要用 model.parameters() 数。",
       "state_dict() was counted: it lists every name, so a reused block counts once per name, and it holds buffers "
       "(a causal mask, say); count the registered parameters with model.parameters().")
def state_dict_counted(model):
    cfg = model.cfg
    return parameter_count(cfg.vocab_size, cfg.block_size, cfg.n_layers, cfg.d_model, cfg.d_ff) - \
        sum(t.numel() for t in model.state_dict().values())


@fault("ledger_gap", "逐个模块数参数、没有去重（named_parameters(remove_duplicate=False)）：复用的块对象被数了 N 次，差距就看不见了。",
       "parameters were counted per module without removing duplicates (named_parameters(remove_duplicate=False)): the "
       "reused block is counted N times, and the gap disappears.")
def duplicates_counted(model):
    cfg = model.cfg
    return parameter_count(cfg.vocab_size, cfg.block_size, cfg.n_layers, cfg.d_model, cfg.d_ff) - \
        sum(p.numel() for _, p in model.named_parameters(remove_duplicate=False))


@fault("ledger_gap", "减反了：ledger_gap 是账本减去注册数，复用块时为正、多注册了参数时为负。",
       "subtracted the wrong way round: ledger_gap is the ledger minus the registered count, positive for a reused "
       "block and negative for extra parameters.")
def gap_reversed(model):
    cfg = model.cfg
    return sum(p.numel() for p in model.parameters()) - \
        parameter_count(cfg.vocab_size, cfg.block_size, cfg.n_layers, cfg.d_model, cfg.d_ff)


@fault("ledger_gap", "只数了 requires_grad 的参数：冻结的参数也是注册的参数，账本把它们算在内。",
       "only parameters with requires_grad were counted: frozen parameters are registered too, and the ledger "
       "counts them.")
def trainable_only_counted(model):
    cfg = model.cfg
    return parameter_count(cfg.vocab_size, cfg.block_size, cfg.n_layers, cfg.d_model, cfg.d_ff) - \
        sum(p.numel() for p in model.parameters() if p.requires_grad)


@fault("ledger_gap", "parameter_count 的参数顺序错了：它是 parameter_count(V, C, N, d, f)，即 vocab_size、block_size、"
       "n_layers、d_model、d_ff。",
       "parameter_count's arguments are in the wrong order: it is parameter_count(V, C, N, d, f), that is "
       "vocab_size, block_size, n_layers, d_model, d_ff.")
def ledger_arguments_swapped(model):
    cfg = model.cfg
    return parameter_count(cfg.vocab_size, cfg.block_size, cfg.d_model, cfg.n_layers, cfg.d_ff) - \
        sum(p.numel() for p in model.parameters())

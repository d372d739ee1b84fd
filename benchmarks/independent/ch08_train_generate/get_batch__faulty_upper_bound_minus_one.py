# exercise: get_batch
# kind: faulty
# class: rule
# rule: the starts must be drawn exactly as torch.randint(len(data) - block_size, (batch_size,),
#       generator=generator) (docstring; notebook: "就这样调用一次，评分器用同一个随机种子比对你抽到的起点").
#       This body "plays safe" with len(data) - block_size - 1, so the last valid start is never
#       drawn and every seeded batch differs from the stated draw.
# shows: data = torch.arange(10), block_size 4, batch_size 8, generator seeded 0: the starts come from
#        randint(5) instead of randint(6), so x differs from data[s:s+4] for the stated s; start 5
#        (x = [5, 6, 7, 8]) can never appear.
def get_batch(data, block_size, batch_size, generator=None):
    starts = torch.randint(len(data) - block_size - 1, (batch_size,), generator=generator)
    x = torch.stack([data[s : s + block_size] for s in starts.tolist()])
    y = torch.stack([data[s + 1 : s + block_size + 1] for s in starts.tolist()])
    return x, y

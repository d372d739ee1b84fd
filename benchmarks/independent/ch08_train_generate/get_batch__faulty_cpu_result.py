# exercise: get_batch
# kind: faulty
# class: device
# rule: "Returns (x, y), each [batch_size, block_size] int64 on data's device" (docstring).  This
#       body builds the batch from a CPU copy of the stream, so x and y are always on the CPU.
# shows: data = torch.arange(40, device="cuda"), block_size 6, batch_size 4: x.device is cpu,
#        not cuda:0 (values are right).
def get_batch(data, block_size, batch_size, generator=None):
    starts = torch.randint(len(data) - block_size, (batch_size,), generator=generator)
    host = data.cpu()
    x = torch.stack([host[s : s + block_size] for s in starts.tolist()])
    y = torch.stack([host[s + 1 : s + block_size + 1] for s in starts.tolist()])
    return x, y

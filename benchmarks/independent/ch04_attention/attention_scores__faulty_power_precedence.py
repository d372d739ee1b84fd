# exercise: attention_scores
# kind: faulty
# class: value
# rule: scale is 1/sqrt(d_h) (docstring "q.k / sqrt(d_h)"); `d_h ** 1 / 2` parses as (d_h ** 1) / 2 = d_h / 2,
#       which equals sqrt(d_h) only for d_h = 4 (the hand example)
# shows: q = k = torch.ones(1, 16): expected 16 / 4 = 4.0, this returns 16 / 8 = 2.0
def attention_scores(q, k):
    d_h = q.shape[-1]
    return q @ k.transpose(-2, -1) / (d_h ** 1 / 2)

# exercise: stable_softmax
# kind: correct
# class: range
# rule: correct; takes the row maximum with torch.max(...).values (not amax), exponentiates with
#       torch.exp of the difference, and multiplies by the reciprocal of the row sum instead of dividing
def stable_softmax(scores):
    row_max = torch.max(scores, dim=-1, keepdim=True).values
    shifted = torch.exp(torch.sub(scores, row_max))
    return shifted * torch.reciprocal(shifted.sum(dim=-1, keepdim=True))

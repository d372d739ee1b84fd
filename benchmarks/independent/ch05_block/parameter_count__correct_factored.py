# exercise: parameter_count
# kind: correct
# class: value
# rule: correct: the ledger 2Vd + Cd + N(4d^2 + 2df + f + 5d) + 2d factored as
#       d * (2V + C + 2 + N(4d + 2f + 5)) + N f, returned as a Python int.
# shows: -
def parameter_count(V, C, N, d, f):
    per_width = 2 * V + C + 2 + N * (4 * d + 2 * f + 5)
    return int(d * per_width + N * f)

# exercise: parameter_count
# kind: faulty
# class: type
# rule: "return the integer given by the ledger formula" (notebook, exercise parameter_count; the
#       answer cells also demand an int); this body squares d with math.pow, so it returns a
#       float (107776.0 == 107776, so the visible check passes).
# shows: parameter_count(32, 64, 2, 64, 256) returns 107776.0 (a float), not the int 107776.
def parameter_count(V, C, N, d, f):
    per_block = 4 * math.pow(d, 2) + 2 * d * f + f + 5 * d
    return 2 * V * d + C * d + N * per_block + 2 * d

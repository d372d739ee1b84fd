# exercise: parameter_count
# kind: faulty
# class: value
# rule: the whole model has "N · block" (README, notebook section 7: N unshared blocks); this
#       body multiplies the per-block count by the chapter's example value 2 instead of N.
#       Both visible-check configurations have N = 2, so it passes them.
# shows: parameter_count(50, 32, 3, 48, 192) should be 2*50*48 + 32*48 + 3*(4*48^2 + 2*48*192
#        + 192 + 5*48) + 2*48 = 90,672; this body returns 62,592 (one block short).
def parameter_count(V, C, N, d, f):
    per_block = 4 * d * d + 2 * d * f + f + 5 * d
    return 2 * V * d + C * d + 2 * per_block + 2 * d

# exercise: parameter_count
# kind: faulty
# class: value
# rule: per block "4d^2 + 2df + f + 5d" with f the FFN width given as an argument (notebook
#       section 7; README); this body uses the rule of thumb f = 4d (12d^2 + 9d per block), which
#       matches the chapter's configuration (d=64, f=256) but not f != 4d (the visible check's
#       second configuration, d=4, f=8, catches it).
# shows: parameter_count(9, 7, 3, 6, 10) should be 2*9*6 + 7*6 + 3*(144 + 120 + 10 + 30) + 12
#        = 1,074; this body returns 1,620. (50, 32, 3, 48, 192) happens to agree (f = 4d).
def parameter_count(V, C, N, d, f):
    per_block = 12 * d * d + 9 * d
    return 2 * V * d + C * d + N * per_block + 2 * d

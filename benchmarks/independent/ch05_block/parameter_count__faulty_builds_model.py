# exercise: parameter_count
# kind: faulty
# class: rule
# rule: "compute it with the formula; do not build a model inside the function and count its
#       parameters (the grader sees an nn.Module constructed here, and the exercise scores 0)"
#       (notebook, exercise parameter_count); this body builds TransformerLM and counts.
# shows: parameter_count(32, 64, 2, 64, 256) returns the right 107776, but constructs an nn.Module
#        (and is slow / memory-hungry for large V, C, d).
def parameter_count(V, C, N, d, f):
    lm = TransformerLM(Config(vocab_size=V, block_size=C, d_model=d, n_heads=1, n_layers=N, d_ff=f))
    return sum(p.numel() for p in lm.parameters())

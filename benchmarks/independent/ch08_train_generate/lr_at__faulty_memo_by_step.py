# exercise: lr_at
# kind: faulty
# class: hidden-state
# rule: lr_at is "a pure function" (docstring; notebook: "只看参数，不读也不改任何状态").  This body
#       memoises results in a module-level dict keyed by the step alone, so after one schedule has
#       been evaluated, a call with other max_lr/min_lr/warmup/total returns the old schedule's rate.
# shows: lr_at(5, max_lr=1e-3, min_lr=1e-4, warmup_steps=10, total_steps=50) -> 6e-4, then
#        lr_at(5, max_lr=3e-3, min_lr=3e-4, warmup_steps=100, total_steps=600) -> 6e-4 instead of 1.8e-4.
def lr_at(step, *, max_lr, min_lr, warmup_steps, total_steps):
    if step < 0:
        raise ValueError(f"step must be >= 0, got {step}")
    if warmup_steps > total_steps:
        raise ValueError(f"warmup_steps {warmup_steps} > total_steps {total_steps}")
    memo = globals().setdefault("_lr_at_memo", {})
    if step in memo:
        return memo[step]
    if step < warmup_steps:
        lr = max_lr * (step + 1) / warmup_steps
    else:
        progress = min(1.0, max(0.0, (step - warmup_steps) / max(1, total_steps - warmup_steps)))
        lr = min_lr + 0.5 * (max_lr - min_lr) * (1 + math.cos(math.pi * progress))
    memo[step] = float(lr)
    return memo[step]

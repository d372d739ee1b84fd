# exercise: lr_at
# kind: faulty
# class: value
# rule: progress = (step - warmup_steps) / max(1, total_steps - warmup_steps) (docstring); with
#       warmup_steps == total_steps (allowed: only warmup_steps > total_steps is an error) the
#       rate is max_lr at step warmup_steps and min_lr afterwards.  This body divides by
#       total_steps - warmup_steps without the max(1, ...).
# shows: lr_at(10, max_lr=1e-3, min_lr=1e-4, warmup_steps=10, total_steps=10) raises
#        ZeroDivisionError instead of returning 1e-3 (and min_lr from step 11 on).
def lr_at(step, *, max_lr, min_lr, warmup_steps, total_steps):
    if step < 0:
        raise ValueError(f"step must be >= 0, got {step}")
    if warmup_steps > total_steps:
        raise ValueError(f"warmup_steps {warmup_steps} > total_steps {total_steps}")
    if step < warmup_steps:
        return max_lr * (step + 1) / warmup_steps
    progress = (step - warmup_steps) / (total_steps - warmup_steps)
    progress = min(1.0, max(0.0, progress))
    return min_lr + 0.5 * (max_lr - min_lr) * (1 + math.cos(math.pi * progress))

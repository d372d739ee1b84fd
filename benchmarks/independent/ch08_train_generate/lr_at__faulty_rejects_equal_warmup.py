# exercise: lr_at
# kind: faulty
# class: rule
# rule: "ValueError for step < 0 or warmup_steps > total_steps" (docstring); warmup_steps ==
#       total_steps is allowed (the docstring's max(1, ...) and "min_lr from step
#       max(total_steps, warmup_steps + 1) on" exist for it).  This body also rejects equality.
# shows: lr_at(3, max_lr=1.0, min_lr=0.1, warmup_steps=5, total_steps=5) raises ValueError instead
#        of returning 0.8 (and step 5 should give 1.0).
def lr_at(step, *, max_lr, min_lr, warmup_steps, total_steps):
    if step < 0:
        raise ValueError(f"step must be >= 0, got {step}")
    if warmup_steps >= total_steps:
        raise ValueError(f"warmup_steps {warmup_steps} must be smaller than total_steps {total_steps}")
    if step < warmup_steps:
        return max_lr * (step + 1) / warmup_steps
    progress = min(1.0, max(0.0, (step - warmup_steps) / max(1, total_steps - warmup_steps)))
    return min_lr + 0.5 * (max_lr - min_lr) * (1 + math.cos(math.pi * progress))

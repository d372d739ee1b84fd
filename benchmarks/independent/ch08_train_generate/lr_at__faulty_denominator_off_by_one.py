# exercise: lr_at
# kind: faulty
# class: value
# rule: progress = (step - warmup_steps) / max(1, total_steps - warmup_steps) (docstring).  This
#       body divides by total_steps - warmup_steps - 1 ("the last step should already be min_lr"),
#       so the cosine runs one step too fast and reaches min_lr at total_steps - 1.
# shows: lr_at(350, max_lr=3e-3, min_lr=3e-4, warmup_steps=100, total_steps=600) gives about
#        1.6415e-3 instead of the notebook's 1.65e-3; lr_at(49, max_lr=1e-3, min_lr=1e-4,
#        warmup_steps=10, total_steps=50) gives 1e-4 instead of about 1.0139e-4.
def lr_at(step, *, max_lr, min_lr, warmup_steps, total_steps):
    if step < 0:
        raise ValueError(f"step must be >= 0, got {step}")
    if warmup_steps > total_steps:
        raise ValueError(f"warmup_steps {warmup_steps} > total_steps {total_steps}")
    if step < warmup_steps:
        return max_lr * (step + 1) / warmup_steps
    progress = min(1.0, max(0.0, (step - warmup_steps) / max(1, total_steps - warmup_steps - 1)))
    return min_lr + 0.5 * (max_lr - min_lr) * (1 + math.cos(math.pi * progress))

# exercise: lr_at
# kind: correct
# class: value
# rule: correct; uses the identity 0.5 * (1 + cos(pi p)) = cos(pi p / 2) ** 2 for the cosine part,
#       clips the progress with sorted()[1] instead of min/max, and validates arguments first.
def lr_at(step, *, max_lr, min_lr, warmup_steps, total_steps):
    if step < 0:
        raise ValueError(f"lr_at: step must be >= 0, got step={step}")
    if warmup_steps > total_steps:
        raise ValueError(f"lr_at: warmup_steps ({warmup_steps}) must not exceed total_steps ({total_steps})")
    if step < warmup_steps:
        return float(max_lr * (step + 1) / warmup_steps)
    span = total_steps - warmup_steps if total_steps - warmup_steps >= 1 else 1
    progress = sorted((0.0, (step - warmup_steps) / span, 1.0))[1]
    half_angle = math.pi * progress / 2.0
    return float(min_lr + (max_lr - min_lr) * math.cos(half_angle) ** 2)

# exercise: gelu
# kind: faulty
# class: gradient
# rule: gelu is part of the trained model and chapter 6 back-propagates through "the same
#       computation graph" (notebook summary); the gate Phi(x) depends on x and must stay in the
#       graph. This body computes Phi under torch.no_grad(), so d/dx gelu becomes Phi(x) instead
#       of Phi(x) + x * phi(x).
# shows: x = torch.tensor([1.0], requires_grad=True); gelu(x).backward(): correct grad 1.083315 (Phi(1) + phi(1)),
#        this body gives 0.841345 (values of the forward pass are identical).
def gelu(x):
    with torch.no_grad():
        gate = 0.5 * (1.0 + torch.erf(x / math.sqrt(2.0)))
    return x * gate

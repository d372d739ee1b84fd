# exercise: layer_norm
# kind: faulty
# class: in-place
# rule: LayerNorm is a function of its input; in the pre-LN block U = X + Attn(LN1(X)) the same X
#       is needed again for the residual addition (notebook section 5), so LN must not change the
#       caller's tensor. This body centres x in place (x -= mean).
# shows: x = torch.tensor([[1.0, 3.0]]); LayerNorm(2)(x) returns the right values but afterwards
#        x is (-1, 1) instead of (1, 3); inside a block the residual then adds to the centred X.
def forward(self, x):
    mean = x.mean(dim=-1, keepdim=True)
    x -= mean
    variance = (x * x).mean(dim=-1, keepdim=True)
    return x / torch.sqrt(variance + self.eps) * self.weight + self.bias

# exercise: layer_norm
# kind: correct
# class: value
# rule: correct: uses torch.var_mean with correction=0 (population variance) in one call and
#       multiplies by torch.rsqrt(v + eps) instead of dividing by sqrt; gamma/beta applied last.
#       Not a built-in normalisation (var_mean is a reduction, not layer/group/batch norm).
# shows: -
def forward(self, x):
    variance, mean = torch.var_mean(x, dim=-1, keepdim=True, correction=0)
    inv_std = torch.rsqrt(variance + self.eps)
    return (x - mean) * inv_std * self.weight + self.bias

# exercise: layer_norm
# kind: faulty
# class: value
# rule: eps must sit INSIDE the square root, r = sqrt(v + eps) (notebook section 2 step 3, README
#       "eps = 1e-5 inside the root", model.py docstring); this body divides by sqrt(v) + eps.
# shows: x = [[1.0, 1.004]] (variance 4e-6 = 0.4 eps, the notebook's own example): correct output
#        is about (-0.5345, 0.5345); this body gives about (-0.995, 0.995). Ordinary inputs with
#        v >> eps (the visible check) agree to ~1e-6.
def forward(self, x):
    mean = x.mean(dim=-1, keepdim=True)
    centred = x - mean
    variance = (centred * centred).mean(dim=-1, keepdim=True)
    return centred / (torch.sqrt(variance) + self.eps) * self.weight + self.bias

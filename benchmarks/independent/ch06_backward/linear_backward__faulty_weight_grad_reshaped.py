# exercise: linear_backward
# kind: faulty
# class: value
# rule: docstring: grad_weight = grad_out^T x, shape [out, in]; this body computes x^T grad_out
#       ([in, out]) and fixes the shape with .reshape(out, in) instead of a transpose, so the
#       shape is right and the values are scrambled
# shows: the notebook's X = [[1,2],[3,-1]], W [3, 2], dY = [[1,0,-1],[2,1,0]]: grad_weight is
#        [[7,3],[-1,0],[-1,-2]] instead of [[7,0],[3,-1],[-1,-2]]
def linear_backward(grad_out, x, weight):
    out_features, in_features = weight.shape
    flat_x = x.reshape(-1, in_features)
    flat_g = grad_out.reshape(-1, out_features)
    grad_x = grad_out @ weight
    grad_weight = (flat_x.transpose(0, 1) @ flat_g).reshape(out_features, in_features)
    grad_bias = flat_g.sum(dim=0)
    return grad_x, grad_weight, grad_bias

"""The stubs chapter 6 puts in hero_transformer/backward.py, and the shortcut each forbids.

Every exercise is a backward pass written by hand, so each forbids automatic differentiation
(seen whatever the route: any operator the autograd engine runs during a backward, or any
operator under a forward-mode level; registry.Forbidden.autograd) and torch's built-in backward
kernels (seen as aten operators).  One Forbidden per exercise, so that the feedback names the
whole rule whichever half of it was broken.
"""

from autograder.registry import Exercise, Forbidden

BACKWARD_KERNELS = ("native_layer_norm_backward", "gelu_backward", "linear_backward", "native_group_norm_backward",
                    "native_batch_norm_backward", "mkldnn_linear_backward", "mkldnn_linear_backward_input",
                    "mkldnn_linear_backward_weights", "batch_norm_backward", "cudnn_batch_norm_backward",
                    "miopen_batch_norm_backward", "batch_norm_backward_elemt", "batch_norm_backward_reduce",
                    "_fused_rms_norm_backward")
# backward composites the dispatcher decomposes into elementary operators before the operator watch
# sees them (infinitely_differentiable_gelu_backward is the exact GELU's derivative, written out)
BACKWARD_FUNCTIONS = ("infinitely_differentiable_gelu_backward", "_batch_norm_impl_index_backward")
NO_AUTOGRAD = Forbidden("automatic differentiation (.backward(), torch.autograd.grad, torch.autograd.functional, "
                        "torch.func) or a built-in backward kernel (native_layer_norm_backward, gelu_backward, ...)",
                        ops=BACKWARD_KERNELS, autograd=True, functions=BACKWARD_FUNCTIONS)

EXERCISES = (
    Exercise("layer_norm_backward", 6, "layer_norm_backward", "LayerNorm 的反向（三项式）",
             "LayerNorm's backward (the three-term form)", (NO_AUTOGRAD,), module="backward"),
    Exercise("gelu_backward", 6, "gelu_backward", "精确 GELU 的导数", "the exact GELU's derivative",
             (NO_AUTOGRAD,), module="backward"),
    # an identity path hands the upstream gradient on as it is, as autograd itself does: grad_bias of a
    # single position may be grad_out itself (einsum returns a view there)
    Exercise("linear_backward", 6, "linear_backward", "线性层的反向（存储约定 [out, in]）",
             "the linear layer's backward (storage [out, in])", (NO_AUTOGRAD,), module="backward",
             may_share=("grad_out",)),
    Exercise("residual_backward", 6, "residual_backward", "残差的反向：恒等项加分支",
             "the residual's backward: identity plus branch", (NO_AUTOGRAD,), module="backward",
             may_share=("grad_out",)),
    Exercise("feedforward_sublayer_backward", 6, "feedforward_sublayer_backward", "pre-LN 前馈子层的反向",
             "the pre-LN feed-forward sublayer's backward", (NO_AUTOGRAD,), module="backward"),
)

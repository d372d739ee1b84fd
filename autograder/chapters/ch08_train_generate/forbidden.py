"""Chapter 8 forbids no shortcut, so this catalogue is empty (and no internal route, no thread
body: registry.INTERNAL_ROUTES is added only to exercises that forbid something).

The calls that could stand in for an exercise are the ones it is meant to make
(torch.nn.utils.clip_grad_norm_ in train_step, torch.multinomial and next_token_probs in
generate, a softmax in next_token_probs), and no library call computes get_batch's windows,
parameter_groups' decay rule, lr_at's schedule or evaluate's weighting for the student.
"""

from autograder.registry import catalogue

CATALOGUE, shortcut = catalogue("forbidden")

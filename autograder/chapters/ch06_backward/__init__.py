"""Chapter 6, gradients by hand (LayerNorm, GELU, Linear, the residual, the pre-LN feed-forward
sublayer): what the grader knows of this chapter and nothing else.

The files of a chapter's grading folder are listed in docs/adding-a-chapter.md.
"""

from autograder.registry import Assignment

from .answers import ANSWERS
from .exercises import EXERCISES

ASSIGNMENT = Assignment("ch06_backward", 6, EXERCISES, ANSWERS, grading=__name__)

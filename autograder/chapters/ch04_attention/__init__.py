"""Chapter 4, causal multi-head attention with a KV cache: what the grader knows of this chapter and nothing else.

The files of a chapter's grading folder are listed in docs/adding-a-chapter.md.
"""

from autograder.registry import Assignment

from .answers import ANSWERS
from .exercises import EXERCISES

ASSIGNMENT = Assignment("ch04_attention", 4, EXERCISES, ANSWERS, grading=__name__)

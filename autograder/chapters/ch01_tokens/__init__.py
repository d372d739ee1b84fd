"""Chapter 1, characters to ids: what the grader knows of this chapter and nothing else.

The files of a chapter's grading folder are listed in docs/adding-a-chapter.md.
"""

from autograder.registry import Assignment

from .answers import ANSWERS
from .exercises import EXERCISES

ASSIGNMENT = Assignment("ch01_tokens", 1, EXERCISES, ANSWERS, grading=__name__)

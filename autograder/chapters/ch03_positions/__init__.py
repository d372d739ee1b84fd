"""Chapter 3, learned absolute positions: what the grader knows of this chapter and nothing else.

The files of a chapter's grading folder are listed in docs/adding-a-chapter.md.
"""

from autograder.registry import Assignment

from .answers import ANSWERS
from .exercises import EXERCISES

ASSIGNMENT = Assignment("ch03_positions", 3, EXERCISES, ANSWERS, grading=__name__)

"""Chapter 2, ids to vectors: what the grader knows of this chapter and nothing else.

The files of a chapter's grading folder are listed in docs/adding-a-chapter.md.
"""

from autograder.registry import Assignment

from .answers import ANSWERS
from .exercises import EXERCISES

ASSIGNMENT = Assignment("ch02_embeddings", 2, EXERCISES, ANSWERS, grading=__name__)

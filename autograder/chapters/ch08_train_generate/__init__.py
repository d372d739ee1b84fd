"""Chapter 8, training and generation: what the grader knows of this chapter and nothing else.

The files of a chapter's grading folder are listed in docs/adding-a-chapter.md.  This chapter
forbids no shortcut (forbidden.py says why), so it has no forbidden catalogue entries.
"""

from autograder.registry import Assignment

from .answers import ANSWERS
from .exercises import EXERCISES

ASSIGNMENT = Assignment("ch08_train_generate", 8, EXERCISES, ANSWERS, grading=__name__)

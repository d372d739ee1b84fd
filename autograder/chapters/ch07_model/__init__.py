"""Chapter 7, the whole model: what the grader knows of this chapter and nothing else.

The chapter's exercises live in two modules: hero_transformer/model.py (the forward of
TransformerLM and init_weights) and hero_transformer/audit.py (the three gradient questions
and the ledger).  The files of a chapter's grading folder are listed in
docs/adding-a-chapter.md.
"""

from autograder.registry import Assignment

from .answers import ANSWERS
from .exercises import EXERCISES

ASSIGNMENT = Assignment("ch07_model", 7, EXERCISES, ANSWERS, grading=__name__)

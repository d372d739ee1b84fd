"""Chapter 5, the pre-LN decoder block: what the grader knows of this chapter and nothing else.

- exercises.py  the package's stubs of this chapter and the shortcuts each forbids
- answers.py    the notebook's answer cells: expected values and known mistakes
- probes.py     cases, test doubles and probes (runs in the sandbox, next to student code)
- properties.py checks any correct output satisfies (shift invariance, identity, causality...)
- faults.py, variants.py, forbidden.py  wrong, correct and forbidden bodies of each exercise
- hostile.py    submissions that attack the grader through this chapter's items
"""

from autograder.registry import Assignment

from .answers import ANSWERS
from .exercises import EXERCISES

ASSIGNMENT = Assignment("ch05_block", 5, EXERCISES, ANSWERS, grading=__name__)

"""One grading folder per chapter: autograder/chapters/<assignment id>/ (docs/adding-a-chapter.md)."""

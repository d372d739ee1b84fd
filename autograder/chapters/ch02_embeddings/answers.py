"""The answer cells of this chapter (filled in with the notebook)."""

ANSWERS = ()

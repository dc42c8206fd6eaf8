"""Student edition of the book: `make student` (see build.py) and its autograder (checks.py)."""

"""Reference solutions: the correct, readable implementation of every exercise.

The grader computes expected values from these modules at grade time. Learners
should try `exercises/` first; the app reveals a solution only after a pass or
on explicit request.
"""

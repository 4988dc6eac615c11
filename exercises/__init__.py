"""Your exercises. Fill in every body that raises NotImplementedError.

Grade your work with `python -m grader` (all) or `python -m grader ex03` (one);
`python -m grader --watch` re-grades an exercise each time you save it.
"""

"""Diagnosis of mistakes nobody listed: automatic mutants of the references (operators.py), run and cached
per grader version (mutants.py), and the one that explains a learner's results named in words (explain.py)."""

"""Attention Lab's shared library: experiment maths, charts, text, data, models.

Pages, the grader and the demos import from here. Nothing in this package
imports Streamlit at module level, so it is unit-tested without a browser.
"""

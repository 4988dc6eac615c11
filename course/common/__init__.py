"""What every part of the project shares: one definition of each common vocabulary.

exercise_index (the exercises and the exercise status vocabulary), paths
(project root, the learner's data folder, atomic writes), i18n (the text
catalogs in course/text/), charts (Altair helpers), pages_index (the ordered page list
the navigation starts from; a new page gets an entry here) and ranking (which graded
result is a learner's best). Imports nothing from
course's other packages, from grader/, classroom/ or app_pages/ (.importlinter's `course` and
`rooms` contracts); the standard library, pandas, numpy, pyarrow and Altair only (tests/layout_rules.py).
"""

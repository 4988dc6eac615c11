"""Class mode's analytics wing: what the class's verdicts say, read by staff.

The gradebook and its rows (analytics.py, frames.py), similarity between learners' code (similarity.py,
disguise.py) and the copy flags built on it (copy_flags.py, copy_evidence.py).

May import: classroom.data, course.common, pandas, numpy and copydetect; never classroom.web, classroom.line nor
classroom.lti (.importlinter `class-wings`).
"""

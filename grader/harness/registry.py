"""The table of procedures by name, filled by the @procedure decorator.

Kept apart from the procedures themselves so that every procedure module
(procedures.py, demo.py) can register into it without importing another.
"""

PROCEDURES = {}


def procedure(fn):
    """Register fn under its name."""
    PROCEDURES[fn.__name__] = fn
    return fn

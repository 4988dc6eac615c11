"""The table of procedures by name, filled by the @procedure decorator.

Kept apart from the procedures themselves so that every procedure module
(procedures.py, demo.py) can register into it without importing another.
"""

PROCEDURES = {}
PROBE_PREFIX = "probe."  # results under this prefix are intermediate values for locating a difference
# (spec["probes"]): never judged, never compared, read only once the check's own results differ


def procedure(fn):
    """Register fn under its name."""
    PROCEDURES[fn.__name__] = fn
    return fn

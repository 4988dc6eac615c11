"""The sandbox harness: code copied into the learner's sandbox (as the package `_harness`).

Nothing here imports the project: only the standard library and torch.
registry.py holds the procedure table, procedures.py and demo.py fill it, child.py
runs them on the learner's staged package.
"""


from .seeding import CALL_SEED, seed, seed_call  # noqa: F401  (the harness's seeding, for the grader)


def load_procedures():
    """{name: procedure} with every procedure module imported."""
    from . import demo, procedures  # noqa: F401  (importing registers them)
    from .registry import PROCEDURES

    return PROCEDURES

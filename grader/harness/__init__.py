"""The sandbox harness: code copied into the learner's sandbox (as the package `_harness`).

Nothing here imports the project: only the standard library and torch.
registry.py holds the procedure table, procedures.py and demo.py fill it, child.py
runs them on the learner's staged package.
"""


CALL_SEED = 1234  # torch's global seed before call i of an exercise is CALL_SEED + i


def seed_call(index):
    """Seed torch's global stream for call `index`, the same for the learner (in the sandbox), the
    reference and the known mistakes; the procedures seed their models, dropout and gradients themselves."""
    import torch

    torch.manual_seed(CALL_SEED + index)


def load_procedures():
    """{name: procedure} with every procedure module imported."""
    from . import demo, procedures  # noqa: F401  (importing registers them)
    from .registry import PROCEDURES

    return PROCEDURES

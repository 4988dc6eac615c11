"""cpu_threads: run a block with a given number of torch CPU threads (the lesson experiments train on a shared machine).

May import torch only.
"""

from contextlib import contextmanager

import torch


@contextmanager
def cpu_threads(n):
    """Run the block with n torch CPU threads, then restore the previous number."""
    old = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(old)

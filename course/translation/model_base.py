"""What every translator shares: importing the attention modules and teacher-forced training.

`impl` names the package the attention modules come from: "solutions",
"exercises", or any importable package with the same files (the grader stages
a learner's copy).
"""

import importlib
import types

from torch import nn


def import_impl(impl, module):
    """Import <impl>.<module>; impl is a package name or an imported package."""
    pkg = impl.__name__ if isinstance(impl, types.ModuleType) else str(impl)
    try:
        return importlib.import_module(f"{pkg}.{module}")
    except ImportError as err:
        raise ImportError(
            f"cannot import {pkg}.{module} ({err}); impl must name an importable package "
            "holding the exercise files, e.g. 'solutions' or 'exercises'"
        ) from err

class Translator(nn.Module):
    """What both translator families share: teacher-forced training through encode()."""

    def forward(self, src, src_valid_lens, tgt_in):
        """Teacher-forced logits (B, T_tgt, V) (causal inside the Transformer's decoder)."""
        logits, _ = self.decoder(tgt_in, self.encode(src, src_valid_lens))
        return logits

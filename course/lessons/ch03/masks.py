"""Chapter 3: the two masked-softmax examples of d2l (Dive into Deep Learning, section 11.3) as presets.

Streamlit-free. Uniform random scores of shape (2, 2, 4), as in d2l, masked by the reference
masked_softmax with valid_lens [2, 3] (one per example) or [[1, 3], [2, 4]] (one per query).
"""

import numpy as np
import torch

from solutions.ex01_softmax import masked_softmax

PRESETS = {
    "per_example": ((2, 2, 4), [2, 3]),  # (B, n_q, n_k), valid_lens of shape (B,)
    "per_query": ((2, 2, 4), [[1, 3], [2, 4]]),  # valid_lens of shape (B, n_q)
}


def preset_call(name):
    """The line of code the preset runs, as d2l writes it."""
    shape, lens = PRESETS[name]
    return f"masked_softmax(torch.rand{shape}, torch.tensor({lens}))"


def preset_weights(name, seed=0):
    """(scores, valid_lens, weights) of a preset with seeded uniform scores."""
    shape, lens = PRESETS[name]
    scores = torch.rand(*shape, generator=torch.Generator().manual_seed(seed))  # (2, 2, 4)
    valid_lens = torch.tensor(lens)  # (2,) or (2, 2)
    return scores, valid_lens, masked_softmax(scores, valid_lens)  # weights (2, 2, 4)


def preset_text(name, seed=0):
    """Scores and weights printed with 4 decimals, nested like a printed (2, 2, 4) tensor."""
    scores, _, weights = preset_weights(name, seed)
    show = lambda x: np.array2string(x.numpy(), precision=4, floatmode="fixed", separator=", ")  # noqa: E731
    return f"scores =\n{show(scores)}\n\nweights =\n{show(weights)}"

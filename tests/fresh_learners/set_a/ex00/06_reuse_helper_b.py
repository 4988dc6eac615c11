# style: reuses receptive_field in a for loop over depths
# bug: max_path_length | dilated cnn uses dilations 2, 4, 8, ... (starts at 2**1 instead of 2**0)
# expect: max_path_length | one too large
"""Exercise 0: path lengths and receptive fields (chapter 1, "From fixed
compression to dynamic reading").

How many steps must information take between the two farthest of n positions?
An RNN walks one position per step, a stack of convolutions widens its view by
k - 1 (times the dilation) per layer, and self-attention connects every pair
directly. Plain Python: no torch needed.
"""

import itertools

ARCHITECTURES = ("rnn", "cnn", "self-attention")


def receptive_field(kernel_size, num_layers, dilations=None):
    """Number of input positions one output of stacked 1-D convolutions sees.

    Stride-1 convolutions of width `kernel_size`; layer l has dilation
    dilations[l] (all 1 when dilations is None):

        R = 1 + (kernel_size - 1) * sum(dilations)

    Example: kernel_size=3, num_layers=4 -> 9.
    Raise ValueError when kernel_size < 1 or len(dilations) != num_layers.
    """
    dils = [1] * num_layers if dilations is None else list(dilations)
    if kernel_size < 1 or len(dils) != num_layers:
        raise ValueError(
            f"invalid kernel_size={kernel_size} / dilations for {num_layers} layers"
        )
    return 1 + (kernel_size - 1) * sum(dils)


def max_path_length(architecture, n, kernel_size=3, dilated=False):
    """Fewest steps that link the two farthest of n positions.

    - "rnn": n - 1 (one position per step)
    - "cnn": the fewest stacked layers whose receptive field covers n
      (dilations 1, 2, 4, ... when `dilated`, else all 1)
    - "self-attention": 1 (every pair is connected directly)
    Any architecture with n == 1 gives 0. Raise ValueError for an unknown
    architecture, n < 1 or kernel_size < 2.
    """
    if architecture not in ARCHITECTURES:
        raise ValueError(architecture)
    if n < 1 or kernel_size < 2:
        raise ValueError("need n >= 1 and kernel_size >= 2")
    if n == 1:
        return 0
    if architecture == "rnn":
        return n - 1
    if architecture == "cnn":
        for depth in itertools.count(1):
            dils = [2 ** (i + 1) for i in range(depth)] if dilated else None
            if receptive_field(kernel_size, depth, dils) >= n:
                return depth
    return 1

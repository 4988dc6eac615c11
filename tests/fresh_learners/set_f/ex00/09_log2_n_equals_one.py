# style: math.log2 closed form for the cnn depth
# bug: max_path_length | no early return for n == 1: the cnn branch takes math.log2(0) and raises ValueError (math domain error) for n == 1 instead of returning 0; runs for n >= 2
# expect: max_path_length | n == 1
"""Exercise 0: path lengths and receptive fields (chapter 1, "From fixed
compression to dynamic reading").

How many steps must information take between the two farthest of n positions?
An RNN walks one position per step, a stack of convolutions widens its view by
k - 1 (times the dilation) per layer, and self-attention connects every pair
directly. Plain Python: no torch needed.
"""

import math

ARCHITECTURES = ("rnn", "cnn", "self-attention")


def receptive_field(kernel_size, num_layers, dilations=None):
    if kernel_size < 1:
        raise ValueError("kernel_size must be at least 1")
    if dilations is None:
        dilations = [1] * num_layers
    if len(dilations) != num_layers:
        raise ValueError("one dilation per layer is needed")
    return 1 + (kernel_size - 1) * sum(dilations)


def max_path_length(architecture, n, kernel_size=3, dilated=False):
    if architecture not in ARCHITECTURES:
        raise ValueError(f"unknown architecture {architecture}")
    if n < 1 or kernel_size < 2:
        raise ValueError("need n >= 1 and kernel_size >= 2")
    if architecture == "rnn":
        return n - 1
    if architecture == "self-attention":
        return 0 if n == 1 else 1
    # cnn: smallest L with 1 + (k - 1) * L >= n, or 1 + (k - 1) * (2**L - 1) >= n
    needed = math.log2(n - 1) - math.log2(kernel_size - 1)
    if dilated:
        return max(0, math.ceil(math.log2(2 ** needed + 1) - 1e-9))
    return max(0, math.ceil(2 ** needed - 1e-9))

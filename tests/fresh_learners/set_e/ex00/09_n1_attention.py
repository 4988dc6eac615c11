# style: helper generating dilation schedules, for-loop search over depth
# bug: max_path_length | self-attention with n == 1 returns 1 instead of 0 (checked before the n == 1 case)
# expect: max_path_length | n == 1
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
    """Number of input positions one output of stacked 1-D convolutions sees."""
    if kernel_size < 1:
        raise ValueError("kernel_size must be positive")
    if dilations is not None and len(dilations) != num_layers:
        raise ValueError("dilations must have num_layers entries")
    total = num_layers if dilations is None else sum(dilations)
    return 1 + (kernel_size - 1) * total


def _schedule(num_layers, dilated):
    return [2 ** i if dilated else 1 for i in range(num_layers)]


def max_path_length(architecture, n, kernel_size=3, dilated=False):
    """Fewest steps that link the two farthest of n positions."""
    if architecture not in ARCHITECTURES:
        raise ValueError("unknown architecture: %s" % architecture)
    if n < 1 or kernel_size < 2:
        raise ValueError("need n >= 1 and kernel_size >= 2")
    if architecture == "self-attention":
        return 1
    if n == 1:
        return 0
    if architecture == "rnn":
        return n - 1
    for depth in itertools.count(1):
        if receptive_field(kernel_size, depth, _schedule(depth, dilated)) >= n:
            return depth

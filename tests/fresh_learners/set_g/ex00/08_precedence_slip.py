# style: closed-form arithmetic with math.ceil and log2
# bug: receptive_field | writes 1 + kernel_size - 1 * sum(dilations) (missing parentheses) for given dilations
# expect: receptive_field | parentheses
"""Exercise 0: path lengths and receptive fields (chapter 1, "From fixed
compression to dynamic reading").

How many steps must information take between the two farthest of n positions?
An RNN walks one position per step, a stack of convolutions widens its view by
k - 1 (times the dilation) per layer, and self-attention connects every pair
directly. Plain Python: no torch needed.
"""

ARCHITECTURES = ("rnn", "cnn", "self-attention")

import math


def receptive_field(kernel_size, num_layers, dilations=None):
    if kernel_size < 1:
        raise ValueError("kernel_size must be >= 1")
    if dilations is None:
        return 1 + (kernel_size - 1) * num_layers
    if len(dilations) != num_layers:
        raise ValueError("need one dilation per layer")
    return 1 + kernel_size - 1 * sum(dilations)


def max_path_length(architecture, n, kernel_size=3, dilated=False):
    if architecture not in ARCHITECTURES:
        raise ValueError(f"unknown architecture {architecture!r}")
    if n < 1 or kernel_size < 2:
        raise ValueError("n must be >= 1 and kernel_size >= 2")
    if n == 1:
        return 0
    if architecture == "rnn":
        return n - 1
    if architecture == "self-attention":
        return 1
    # cnn: need (k - 1) * S >= n - 1
    need = math.ceil((n - 1) / (kernel_size - 1))
    if not dilated:
        return need
    # S = 2**L - 1 for dilations 1, 2, 4, ...
    L = max(0, math.ceil(math.log2(need + 1)))
    while (2 ** L - 1) * (kernel_size - 1) < n - 1:
        L += 1
    while L > 1 and (2 ** (L - 1) - 1) * (kernel_size - 1) >= n - 1:
        L -= 1
    return L

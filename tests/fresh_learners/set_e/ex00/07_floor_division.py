# style: closed-form arithmetic with math.ceil, dict dispatch
# bug: max_path_length | non-dilated cnn depth uses floor division instead of ceiling
# expect: max_path_length | round
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
    """R = 1 + (kernel_size - 1) * sum(dilations)."""
    if kernel_size < 1:
        raise ValueError("kernel_size < 1")
    dil = [1] * num_layers if dilations is None else list(dilations)
    if len(dil) != num_layers:
        raise ValueError("len(dilations) != num_layers")
    return 1 + (kernel_size - 1) * sum(dil)


def _cnn_layers(n, k, dilated):
    span = n - 1
    if not dilated:
        return span // (k - 1)
    # 1 + (k - 1) * (2**L - 1) >= n  <=>  2**L >= span / (k - 1) + 1
    L = 0
    while (k - 1) * (2 ** L - 1) < span:
        L += 1
    return L


def max_path_length(architecture, n, kernel_size=3, dilated=False):
    """Fewest steps that link the two farthest of n positions."""
    if architecture not in ARCHITECTURES or n < 1 or kernel_size < 2:
        raise ValueError("bad arguments")
    if n == 1:
        return 0
    table = {
        "rnn": lambda: n - 1,
        "cnn": lambda: _cnn_layers(n, kernel_size, dilated),
        "self-attention": lambda: 1,
    }
    return table[architecture]()

# style: closed-form with math.ceil / math.log2
# bug: max_path_length | never rejects kernel_size < 2, so kernel_size=1 divides by zero instead of raising ValueError
# expect: max_path_length | kernel_size < 2
"""Exercise 0: path lengths and receptive fields (chapter 1)."""

import math

ARCHITECTURES = ("rnn", "cnn", "self-attention")


def receptive_field(kernel_size, num_layers, dilations=None):
    if kernel_size < 1:
        raise ValueError("kernel_size must be >= 1")
    if dilations is None:
        dilations = [1] * num_layers
    if len(dilations) != num_layers:
        raise ValueError("len(dilations) must equal num_layers")
    return 1 + (kernel_size - 1) * sum(dilations)


def max_path_length(architecture, n, kernel_size=3, dilated=False):
    if architecture not in ARCHITECTURES:
        raise ValueError(f"unknown architecture {architecture}")
    if n < 1:
        raise ValueError("n must be >= 1")
    if n == 1:
        return 0
    if architecture == "rnn":
        return n - 1
    if architecture == "self-attention":
        return 1
    steps = (n - 1) // (kernel_size - 1) + ((n - 1) % (kernel_size - 1) != 0)
    if not dilated:
        return steps
    # 2**L - 1 >= steps
    return math.ceil(math.log2(steps + 1))

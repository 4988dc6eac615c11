# bug: the number of layers rounded down instead of up
# expect: max_path_length | round
"""Exercise 0 with closed-form answers where there is one."""

import math

ARCHITECTURES = ("rnn", "cnn", "self-attention")


def receptive_field(kernel_size, num_layers, dilations=None):
    """R = 1 + (k - 1) * sum(dilations)."""
    if kernel_size < 1:
        raise ValueError(f"bad kernel_size {kernel_size}")
    dilations = [1] * num_layers if dilations is None else list(dilations)
    if len(dilations) != num_layers:
        raise ValueError(f"{len(dilations)} dilations for {num_layers} layers")
    return 1 + (kernel_size - 1) * sum(d for d in dilations)


def max_path_length(architecture, n, kernel_size=3, dilated=False):
    """rnn: n - 1; self-attention: 1; cnn: fewest layers covering n."""
    if architecture not in ARCHITECTURES:
        raise ValueError(architecture)
    if n < 1:
        raise ValueError("n must be at least 1")
    if kernel_size < 2:
        raise ValueError("kernel_size must be at least 2")
    if n == 1:
        return 0
    if architecture == "rnn":
        return n - 1
    if architecture == "self-attention":
        return 1
    if not dilated:
        return math.floor((n - 1) / (kernel_size - 1))
    # dilations 1, 2, 4, ...: after L layers R = 1 + (k - 1) * (2**L - 1)
    layers = 0
    while 1 + (kernel_size - 1) * (2**layers - 1) < n:
        layers += 1
    return layers

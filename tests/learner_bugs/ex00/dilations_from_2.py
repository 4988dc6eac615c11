# bug: dilations 2, 4, 8, ... instead of 1, 2, 4, ...
# expect: max_path_length | one too large
"""Exercise 0, written with loops."""

ARCHITECTURES = ("rnn", "cnn", "self-attention")


def receptive_field(kernel_size, num_layers, dilations=None):
    """Positions one output of stacked convolutions sees."""
    if kernel_size < 1:
        raise ValueError("kernel_size must be >= 1")
    if dilations is None:
        dilations = [1 for _ in range(num_layers)]
    if len(dilations) != num_layers:
        raise ValueError("one dilation per layer")
    seen = 1
    for d in dilations:
        seen += (kernel_size - 1) * d
    return seen


def max_path_length(architecture, n, kernel_size=3, dilated=False):
    """Fewest steps between the two farthest of n positions."""
    if architecture not in ARCHITECTURES:
        raise ValueError(f"unknown architecture {architecture}")
    if n < 1 or kernel_size < 2:
        raise ValueError("need n >= 1 and kernel_size >= 2")
    if n == 1:
        return 0
    if architecture == "rnn":
        return n - 1
    if architecture == "self-attention":
        return 1
    layers = []
    while receptive_field(kernel_size, len(layers), layers) < n:
        layers.append(2 ** (len(layers) + 1) if dilated else 1)
    return len(layers)

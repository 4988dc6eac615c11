# style: straightforward loops, grow layers until covered
# bug: none
"""Exercise 0: path lengths and receptive fields (chapter 1)."""

ARCHITECTURES = ("rnn", "cnn", "self-attention")


def receptive_field(kernel_size, num_layers, dilations=None):
    """Number of input positions one output of stacked 1-D convolutions sees."""
    if kernel_size < 1:
        raise ValueError("kernel_size must be at least 1")
    if dilations is None:
        dilations = [1] * num_layers
    if len(dilations) != num_layers:
        raise ValueError("need one dilation per layer")
    return 1 + (kernel_size - 1) * sum(dilations)


def max_path_length(architecture, n, kernel_size=3, dilated=False):
    """Fewest steps that link the two farthest of n positions."""
    if architecture not in ARCHITECTURES:
        raise ValueError(f"unknown architecture {architecture!r}")
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
    layers = 0
    while True:
        layers += 1
        if dilated:
            dils = [2 ** l for l in range(layers)]
        else:
            dils = [1] * layers
        if receptive_field(kernel_size, layers, dils) >= n:
            return layers

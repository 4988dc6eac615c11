# style: explicit loops, layer-by-layer growth
# bug: max_path_length | cnn loop uses <= so it adds one layer too many when the field exactly equals n
# expect: max_path_length | one layer
"""Exercise 0: path lengths and receptive fields (chapter 1, "From fixed
compression to dynamic reading").

How many steps must information take between the two farthest of n positions?
An RNN walks one position per step, a stack of convolutions widens its view by
k - 1 (times the dilation) per layer, and self-attention connects every pair
directly. Plain Python: no torch needed.
"""

ARCHITECTURES = ("rnn", "cnn", "self-attention")


def receptive_field(kernel_size, num_layers, dilations=None):
    """Number of input positions one output of stacked 1-D convolutions sees."""
    if kernel_size < 1:
        raise ValueError("kernel_size must be >= 1")
    if dilations is None:
        dilations = [1] * num_layers
    if len(dilations) != num_layers:
        raise ValueError("need one dilation per layer")
    field = 1
    for d in dilations:
        field += (kernel_size - 1) * d
    return field


def max_path_length(architecture, n, kernel_size=3, dilated=False):
    """Fewest steps that link the two farthest of n positions."""
    if architecture not in ARCHITECTURES:
        raise ValueError(f"unknown architecture {architecture!r}")
    if n < 1:
        raise ValueError("n must be >= 1")
    if kernel_size < 2:
        raise ValueError("kernel_size must be >= 2")
    if n == 1:
        return 0
    if architecture == "rnn":
        return n - 1
    if architecture == "self-attention":
        return 1
    layers = 0
    dilations = []
    while receptive_field(kernel_size, layers, dilations) <= n:
        dilations.append(2 ** layers if dilated else 1)
        layers += 1
    return layers

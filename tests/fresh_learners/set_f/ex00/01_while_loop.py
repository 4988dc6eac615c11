# style: while loop growing the stack layer by layer
# bug: none
"""Exercise 0: path lengths and receptive fields (chapter 1, "From fixed
compression to dynamic reading").

How many steps must information take between the two farthest of n positions?
An RNN walks one position per step, a stack of convolutions widens its view by
k - 1 (times the dilation) per layer, and self-attention connects every pair
directly. Plain Python: no torch needed.
"""

ARCHITECTURES = ("rnn", "cnn", "self-attention")


def receptive_field(kernel_size, num_layers, dilations=None):
    if kernel_size < 1:
        raise ValueError(f"kernel_size must be >= 1, got {kernel_size}")
    if dilations is None:
        dilations = [1] * num_layers
    if len(dilations) != num_layers:
        raise ValueError(f"{len(dilations)} dilations for {num_layers} layers")
    return 1 + (kernel_size - 1) * sum(dilations)


def max_path_length(architecture, n, kernel_size=3, dilated=False):
    if architecture not in ARCHITECTURES:
        raise ValueError(f"unknown architecture {architecture!r}")
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    if kernel_size < 2:
        raise ValueError(f"kernel_size must be >= 2, got {kernel_size}")
    if n == 1:
        return 0
    if architecture == "rnn":
        return n - 1
    if architecture == "self-attention":
        return 1
    layers = 0
    dilations = []
    while receptive_field(kernel_size, layers, dilations) < n:
        dilations.append(2 ** layers if dilated else 1)
        layers += 1
    return layers

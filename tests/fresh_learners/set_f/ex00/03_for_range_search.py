# style: for loop over candidate depths calling receptive_field with explicit dilation lists
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
        raise ValueError("kernel_size < 1")
    if dilations is None:
        dilations = tuple(1 for _ in range(num_layers))
    if len(dilations) != num_layers:
        raise ValueError("len(dilations) != num_layers")
    total = 1
    for d in dilations:
        total += (kernel_size - 1) * d
    return total


def max_path_length(architecture, n, kernel_size=3, dilated=False):
    if architecture not in ARCHITECTURES:
        raise ValueError("unknown architecture " + str(architecture))
    if n < 1:
        raise ValueError("n < 1")
    if kernel_size < 2:
        raise ValueError("kernel_size < 2")
    if n == 1:
        return 0
    if architecture == "rnn":
        return n - 1
    if architecture == "self-attention":
        return 1
    for num_layers in range(1, n):
        if dilated:
            dils = [2 ** l for l in range(num_layers)]
        else:
            dils = [1] * num_layers
        if receptive_field(kernel_size, num_layers, dils) >= n:
            return num_layers
    return n - 1

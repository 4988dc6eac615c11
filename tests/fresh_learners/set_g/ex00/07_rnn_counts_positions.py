# style: while loops, layer by layer
# bug: max_path_length | "rnn" returns n (positions) instead of n - 1 (steps)
# expect: max_path_length | rnn n - 1
"""Exercise 0: path lengths and receptive fields (chapter 1, "From fixed
compression to dynamic reading").

How many steps must information take between the two farthest of n positions?
An RNN walks one position per step, a stack of convolutions widens its view by
k - 1 (times the dilation) per layer, and self-attention connects every pair
directly. Plain Python: no torch needed.
"""

ARCHITECTURES = ("rnn", "cnn", "self-attention")


def receptive_field(kernel_size, num_layers, dilations=None):
    if dilations is None:
        dilations = [1] * num_layers
    if kernel_size < 1 or len(dilations) != num_layers:
        raise ValueError("bad kernel_size or dilations")
    R = 1
    for d in dilations:
        R += (kernel_size - 1) * d
    return R


def max_path_length(architecture, n, kernel_size=3, dilated=False):
    if architecture not in ARCHITECTURES:
        raise ValueError(f"unknown architecture {architecture!r}")
    if n < 1 or kernel_size < 2:
        raise ValueError("n must be >= 1 and kernel_size >= 2")
    if n == 1:
        return 0
    if architecture == "rnn":
        return n
    if architecture == "self-attention":
        return 1
    layers = 0
    while True:
        layers += 1
        dil = [2 ** l for l in range(layers)] if dilated else None
        if receptive_field(kernel_size, layers, dil) >= n:
            return layers

# style: dispatch table of small functions, integer arithmetic
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
    dilations = list(dilations) if dilations is not None else [1 for _ in range(num_layers)]
    if kernel_size < 1:
        raise ValueError("kernel_size < 1")
    if len(dilations) != num_layers:
        raise ValueError("len(dilations) != num_layers")
    return 1 + (kernel_size - 1) * sum(dilations)


def _cnn(n, kernel_size, dilated):
    covered, layers, d = 1, 0, 1
    while covered < n:
        covered += (kernel_size - 1) * d
        layers += 1
        if dilated:
            d *= 2
    return layers


def max_path_length(architecture, n, kernel_size=3, dilated=False):
    table = {
        "rnn": lambda: n - 1,
        "cnn": lambda: _cnn(n, kernel_size, dilated),
        "self-attention": lambda: 1,
    }
    if architecture not in table:
        raise ValueError(f"unknown architecture {architecture!r}")
    if n < 1 or kernel_size < 2:
        raise ValueError("bad n or kernel_size")
    return 0 if n == 1 else table[architecture]()

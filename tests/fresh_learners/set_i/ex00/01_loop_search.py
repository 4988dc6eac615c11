# style: plain loops, grow the stack one layer at a time
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
    """Number of input positions one output of stacked 1-D convolutions sees.

    Stride-1 convolutions of width `kernel_size`; layer l has dilation
    dilations[l] (all 1 when dilations is None):

        R = 1 + (kernel_size - 1) * sum(dilations)

    Example: kernel_size=3, num_layers=4 -> 9.
    Raise ValueError when kernel_size < 1 or len(dilations) != num_layers.
    """
    if kernel_size < 1:
        raise ValueError(f"kernel_size must be >= 1, got {kernel_size}")
    if dilations is None:
        dilations = [1] * num_layers
    if len(dilations) != num_layers:
        raise ValueError(f"expected {num_layers} dilations, got {len(dilations)}")
    total = 0
    for d in dilations:
        total += d
    return 1 + (kernel_size - 1) * total


def max_path_length(architecture, n, kernel_size=3, dilated=False):
    """Fewest steps that link the two farthest of n positions.

    - "rnn": n - 1 (one position per step)
    - "cnn": the fewest stacked layers whose receptive field covers n
      (dilations 1, 2, 4, ... when `dilated`, else all 1)
    - "self-attention": 1 (every pair is connected directly)
    Any architecture with n == 1 gives 0. Raise ValueError for an unknown
    architecture, n < 1 or kernel_size < 2.

    The default kernel_size is 3 in the published exercise. In a class your
    exercise variant gives you your own default (the Practice page and
    `python -m grader --variant N` show it): write it as the default of
    kernel_size here; the grader calls max_path_length without it where a
    check leaves it out.
    """
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
        dil = [2 ** i for i in range(layers)] if dilated else None
        if receptive_field(kernel_size, layers, dil) >= n:
            return layers
        layers += 1

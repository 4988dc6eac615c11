# style: straightforward, validation up front, while loop
# bug: receptive_field | len(dilations) is checked before the None default is filled in, so dilations=None raises TypeError
# expect: receptive_field | dilations None
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

    R = 1 + (kernel_size - 1) * sum(dilations), dilations all 1 when None.
    """
    if kernel_size < 1 or len(dilations) != num_layers:
        raise ValueError("invalid kernel_size or dilations")
    if dilations is None:
        dilations = [1] * num_layers
    return 1 + (kernel_size - 1) * sum(dilations)


def max_path_length(architecture, n, kernel_size=3, dilated=False):
    """Fewest steps that link the two farthest of n positions.

    rnn: n - 1, cnn: fewest layers whose receptive field covers n,
    self-attention: 1; n == 1 gives 0.
    """
    if architecture not in ARCHITECTURES:
        raise ValueError(f"unknown architecture: {architecture}")
    if n < 1 or kernel_size < 2:
        raise ValueError("n must be >= 1 and kernel_size >= 2")
    if n == 1:
        return 0
    if architecture == "rnn":
        return n - 1
    if architecture == "self-attention":
        return 1
    num_layers = 1
    while True:
        dilations = [2 ** l for l in range(num_layers)] if dilated else [1] * num_layers
        if receptive_field(kernel_size, num_layers, dilations) >= n:
            return num_layers
        num_layers += 1

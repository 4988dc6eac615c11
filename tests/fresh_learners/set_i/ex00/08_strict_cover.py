# style: incremental field counter, one loop for both stacks
# bug: max_path_length | the cnn loop keeps adding layers while field <= n, so a stack whose receptive field is exactly n gets one layer too many
# expect: max_path_length | receptive field covers n
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
        raise ValueError("kernel_size must be at least 1")
    if dilations is None:
        dilations = [1] * num_layers
    if len(dilations) != num_layers:
        raise ValueError("need exactly num_layers dilations")
    field = 1
    for d in dilations:
        field += (kernel_size - 1) * d
    return field


def max_path_length(architecture, n, kernel_size=3, dilated=False):
    """Fewest steps that link the two farthest of n positions."""
    if architecture not in ARCHITECTURES:
        raise ValueError(f"architecture must be one of {ARCHITECTURES}")
    if n < 1:
        raise ValueError("n must be positive")
    if kernel_size < 2:
        raise ValueError("kernel_size must be >= 2")
    if n == 1:
        return 0
    if architecture == "rnn":
        return n - 1
    if architecture == "self-attention":
        return 1
    field, layers, dilation = 1, 0, 1
    while field <= n:
        field += (kernel_size - 1) * dilation
        layers += 1
        if dilated:
            dilation *= 2
    return layers

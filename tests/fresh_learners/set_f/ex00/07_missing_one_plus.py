# style: closed-form integer arithmetic with a dict dispatch
# bug: receptive_field | returns (kernel_size - 1) * sum(dilations), forgetting the output position itself (the 1 +): kernel_size=3, num_layers=4 gives 8, not 9
# expect: receptive_field | 1 +
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
        raise ValueError("kernel_size must be at least 1")
    dilations = [1] * num_layers if dilations is None else list(dilations)
    if len(dilations) != num_layers:
        raise ValueError("need exactly one dilation per layer")
    return (kernel_size - 1) * sum(dilations)


def _cnn_layers(n, kernel_size, dilated):
    # each layer with dilation 1 adds kernel_size - 1 positions
    steps = -(-(n - 1) // (kernel_size - 1))  # ceil((n - 1) / (k - 1))
    if not dilated:
        return steps
    # dilations 1, 2, 4, ...: L layers add (k - 1) * (2**L - 1); need 2**L - 1 >= steps
    return steps.bit_length()


def max_path_length(architecture, n, kernel_size=3, dilated=False):
    if architecture not in ARCHITECTURES:
        raise ValueError(f"unknown architecture: {architecture}")
    if n < 1 or kernel_size < 2:
        raise ValueError("need n >= 1 and kernel_size >= 2")
    if n == 1:
        return 0
    return {
        "rnn": lambda: n - 1,
        "cnn": lambda: _cnn_layers(n, kernel_size, dilated),
        "self-attention": lambda: 1,
    }[architecture]()

# style: for-loop over candidate depths, helper for the dilation schedule
# bug: max_path_length | the dilated schedule builds num_layers + 1 dilations (range(L + 1)), so its own receptive_field raises ValueError whenever dilated=True for cnn
# expect: max_path_length | dilated dilations length
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
        raise ValueError("kernel_size must be positive")
    if dilations is None:
        dilations = [1 for _ in range(num_layers)]
    elif len(dilations) != num_layers:
        raise ValueError("one dilation per layer")
    return 1 + (kernel_size - 1) * sum(dilations)


def _schedule(num_layers, dilated):
    if not dilated:
        return None
    return [2 ** l for l in range(num_layers + 1)]


def max_path_length(architecture, n, kernel_size=3, dilated=False):
    """Fewest steps that link the two farthest of n positions.

    - "rnn": n - 1 (one position per step)
    - "cnn": the fewest stacked layers whose receptive field covers n
      (dilations 1, 2, 4, ... when `dilated`, else all 1)
    - "self-attention": 1 (every pair is connected directly)
    Any architecture with n == 1 gives 0. Raise ValueError for an unknown
    architecture, n < 1 or kernel_size < 2.
    """
    if architecture not in ARCHITECTURES:
        raise ValueError("unknown architecture")
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
    for depth in range(1, n):
        if receptive_field(kernel_size, depth, _schedule(depth, dilated)) >= n:
            return depth
    return n - 1
